/**
 * One writer per SQLite file, with real `smsgate serve` children: a second serve on
 * the same database exits 1 at once naming the file and the holder (pid, host) while the first keeps
 * serving; admin commands work beside a running serve; after a `kill -9` the lock is gone with the
 * process, so serve starts again on the same file; after a clean stop too.
 */
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, GatewayProcess, REPO_ROOT, writeGatewayConfig } from '../support/gateway-process.js';
import { tempDir } from './e2e-setup.js';

const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

let dir: string;
let configPath: string;
let databasePath: string;
const gateways: GatewayProcess[] = [];

beforeAll(() => {
  ensureBuilt();
  dir = tempDir('one-writer');
  const written = writeGatewayConfig(dir, {
    database: { path: join(dir, 'smsgate.sqlite') },
    api: { host: '127.0.0.1', port: 0 },
    logging: { level: 'info' },
    transports: [{ name: 'sim', type: 'simulator' }],
    routes: [{ prefix: '', transport: 'sim' }],
  });
  configPath = written.path;
  databasePath = written.config.database.path;
}, 60_000);

afterAll(() => {
  for (const gateway of gateways) gateway.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function startServe(): Promise<GatewayProcess> {
  const gateway = await GatewayProcess.spawn(configPath);
  gateways.push(gateway);
  return gateway;
}

/** Runs `smsgate serve` expecting it to give up; killed if it is still running after the deadline. */
function serveThatShouldExit(timeoutMs: number): Promise<{ code: number | null; stderr: string; stdout: string; killed: boolean }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--config', configPath], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => {
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout, killed });
    });
  });
}

async function healthy(baseUrl: string): Promise<number> {
  return (await fetch(`${baseUrl}/health`)).status;
}

describe('one smsgate serve per SQLite file', () => {
  it('refuses a second serve with exit 1 naming the file and the holder; the first keeps serving; admin commands still work', async () => {
    const first = await startServe();
    const second = await serveThatShouldExit(20_000);
    expect(second.killed).toBe(false);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(databasePath);
    expect(second.stderr).toContain(`pid ${first.pid}`);
    expect(second.stderr).toContain(`host ${hostname()}`);
    expect(second.stdout).not.toMatch(/listening on/);
    expect(await healthy(first.baseUrl)).toBe(200);

    // An admin command opens the same database while serve runs.
    const admin = spawnSync(process.execPath, [CLI, 'client', 'create', '--name', 'beside-serve', '--config', configPath, '--json'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(admin.stderr).toBe('');
    expect(admin.status).toBe(0);
    expect(JSON.parse(admin.stdout)).toMatchObject({ name: 'beside-serve' });
    expect(await healthy(first.baseUrl)).toBe(200);

    // kill -9: the kernel drops the lock with the process; serve starts again on the same file.
    first.kill('SIGKILL');
    expect((await first.waitForExit()).signal).toBe('SIGKILL');
    const restarted = await startServe();
    expect(await healthy(restarted.baseUrl)).toBe(200);
    const refused = await serveThatShouldExit(20_000);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`pid ${restarted.pid}`);

    // A clean stop releases it too.
    expect(await restarted.stop()).toBe(0);
    const again = await startServe();
    expect(await healthy(again.baseUrl)).toBe(200);
    expect(await again.stop()).toBe(0);
  }, 180_000);
});
