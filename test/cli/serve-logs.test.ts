/**
 * Where `smsgate serve` logs, checked on real serve children: JSON lines into a pipe, pino-pretty on
 * a terminal (a pseudo-terminal from script(1)), and `logging.file` reopened on SIGHUP after a
 * logrotate-style rename, with the new lines in the new file. Every child is killed by its test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, GatewayProcess, REPO_ROOT, writeGatewayConfig } from '../support/gateway-process.js';

const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'smsgate-logs-'));
const children: ChildProcess[] = [];
const pids: number[] = [];

function config(name: string, logging: Record<string, unknown> = {}): string {
  const subdir = join(dir, name);
  return writeGatewayConfig(mkdtempSync(`${subdir}-`), {
    database: { path: join(`${subdir}-data`, 'gw.sqlite') },
    api: { host: '127.0.0.1', port: 0 },
    transports: [{ name: 'sim', type: 'simulator' }],
    logging,
  }).path;
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const ANSI = /\u001b\[[0-9;]*m/g;

beforeAll(() => ensureBuilt(), 300_000);
afterEach(() => {
  for (const pid of pids.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('smsgate serve logs', () => {
  it('writes JSON lines when stdout is a pipe, and a SIGHUP without a log file changes nothing', async () => {
    const gateway = await GatewayProcess.spawn(config('json'));
    try {
      const first = JSON.parse(gateway.logLines[0] ?? '') as { level: number; msg: string; service: string };
      expect(first).toMatchObject({ level: 30, service: 'smsgate' });
      const listening = gateway.logLines.map((line) => JSON.parse(line) as { msg: string }).find((line) => line.msg.startsWith('smsgate listening on'));
      expect(listening).toBeDefined();
      gateway.kill('SIGHUP');
      await until(() => gateway.logLines.some((line) => line.includes('no log file to reopen')), 10_000, 'the SIGHUP line');
      expect((await fetch(`${gateway.baseUrl}/health`)).status).toBe(200);
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
  });

  it('is pretty (pino-pretty) when stdout is a terminal', async () => {
    const path = config('tty');
    // script(1) runs the command on a pseudo-terminal; the shell prints serve's pid so the test can stop it.
    const script = spawn('script', ['-qec', `${process.execPath} ${CLI} serve --config ${path} & echo "serve-pid $!"; wait`, '/dev/null'], {
      cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(script);
    let output = '';
    script.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await until(() => /serve-pid (\d+)/.test(output), 10_000, 'the pid of serve');
    const pid = Number(/serve-pid (\d+)/.exec(output)?.[1]);
    pids.push(pid);
    await until(() => output.includes('listening on http://'), 30_000, 'serve to listen');
    const text = output.replace(ANSI, '');
    expect(text).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] INFO: smsgate listening on http:\/\/127\.0\.0\.1:\d+/m);
    expect(text).not.toContain('{"level"');
    process.kill(pid, 'SIGTERM');
    expect(await exitOf(script)).toBe(0);
    expect(alive(pid)).toBe(false);
  });

  it('writes logging.file and reopens it on SIGHUP: after a rename, new lines land in a new file', async () => {
    const logDir = mkdtempSync(join(dir, 'file-'));
    const file = join(logDir, 'logs', 'smsgate.log');
    const child = spawn(process.execPath, [CLI, 'serve', '--config', config('file', { file })], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const read = (path: string): string => (existsSync(path) ? readFileSync(path, 'utf8') : '');
    await until(() => read(file).includes('smsgate listening on'), 30_000, 'the listening line in the log file');
    expect(statSync(file).mode & 0o007).toBe(0);
    renameSync(file, `${file}.1`);
    child.kill('SIGHUP');
    await until(() => read(file).includes('log file reopened'), 10_000, 'the reopened line in a new file');
    child.kill('SIGTERM');
    expect(await exitOf(child)).toBe(0);
    const rotated = read(`${file}.1`);
    const current = read(file);
    expect(rotated).toContain('smsgate listening on');
    expect(rotated).not.toContain('log file reopened');
    expect(current).toContain('"msg":"stopping"');
    expect(current).not.toContain('smsgate listening on');
    for (const line of current.trim().split('\n')) expect(() => JSON.parse(line) as unknown).not.toThrow();
    expect(stdout).toBe('');
  });
});
