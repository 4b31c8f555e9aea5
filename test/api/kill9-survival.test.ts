/**
 * A 202 survives kill -9: the real `smsgate serve` process is killed with SIGKILL right after it
 * answers, restarted on the same database, and the campaign is processed and summarised.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killPeer, spawnPeer } from '../support/peer-process.js';
import { fetchChecked } from '../support/openapi-check.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'dist/src/cli/main.js');

let dir: string;
let configPath: string;
const children: ChildProcess[] = [];

async function cli(...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [MAIN, ...args, '--config', configPath, '--json'], { cwd: dir });
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** Starts `smsgate serve` and resolves with its base URL once it listens (read from its log line). */
function serve(): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawnPeer(process.execPath, [MAIN, 'serve', '--config', configPath], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolvePromise, reject) => {
    let output = '';
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      const match = /"port":(\d+)/.exec(output);
      if (match !== null) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolvePromise({ child, baseUrl: `http://127.0.0.1:${match[1]}` });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${String(code)} before listening:\n${output}`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((r) => {
    if (child.exitCode !== null || child.signalCode !== null) r();
    else child.once('exit', () => r());
  });
}

beforeAll(async () => {
  // The serve command runs from dist/: build it (tsc emits even when other areas have type errors).
  await run('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT }).catch(() => undefined);
  if (!existsSync(MAIN)) throw new Error(`build did not produce ${MAIN}`);
  dir = mkdtempSync(join(tmpdir(), 'smsgate-kill9-'));
  configPath = join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify({
    database: { path: join(dir, 'smsgate.sqlite') },
    api: { host: '127.0.0.1', port: 0, maxBodyBytes: 67_108_864 },
    logging: { level: 'info' },
    transports: [{ name: 'sim', type: 'simulator' }],
    routes: [{ prefix: '', transport: 'sim' }],
  }));
}, 180_000);

afterAll(() => {
  for (const child of children) killPeer(child, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('kill -9 right after a 202', () => {
  it('keeps the accepted campaign: after a restart it is processed and its summary appears', async () => {
    // Admin commands never create a database: only migrate (or serve) makes the file.
    await cli('migrate');
    await cli('client', 'create', '--name', 'acme');
    await cli('user', 'create', '--client', 'acme', '--username', 'ops', '--password', 'a long password', '--admin');
    const { token } = (await cli('token', 'create', '--username', 'ops')) as { token: string };

    const first = await serve();
    const recipientInfo = Array.from({ length: 20_000 }, (_, i) => ({ msisdn: `4477${String(i).padStart(8, '0')}` }));
    const res = await fetchChecked(`${first.baseUrl}/v1/campaign`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ text: 'survives', from: 'Acme', recipientInfo }),
    });
    killPeer(first.child, 'SIGKILL');
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    await exited(first.child);
    expect(first.child.signalCode).toBe('SIGKILL');

    const second = await serve();
    let summary: Response | undefined;
    for (let attempt = 0; attempt < 300; attempt++) {
      summary = await fetchChecked(`${second.baseUrl}/v1/campaign/${id}`, { headers: { authorization: `Bearer ${token}` } });
      if (summary.status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(summary?.status).toBe(200);
    const body = (await summary?.json()) as { totalSent: number };
    expect(body.totalSent).toBe(20_000);
    killPeer(second.child, 'SIGTERM');
    await exited(second.child);
  }, 120_000);
});
