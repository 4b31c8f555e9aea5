/**
 * `smsgate serve` as a real process: it applies migrations and listens on the configured
 * simulator default, stops cleanly on SIGTERM (exit 0), and fails fast with a clear message and
 * exit code when it cannot run (bad arguments 2, busy port or bad config 1).
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, GatewayProcess, REPO_ROOT } from '../support/gateway-process.js';
import { tempDir } from './e2e-setup.js';
import { killPeer, spawnPeer } from '../support/peer-process.js';

const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
let dir: string;

beforeAll(() => {
  ensureBuilt();
  dir = tempDir('serve');
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawnPeer(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => killPeer(child, 'SIGKILL'), 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

function simulatorConfig(name: string, port: number): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({
    database: { path: join(dir, `${name}.sqlite`) },
    api: { host: '127.0.0.1', port },
    transports: [{ name: 'sim', type: 'simulator' }],
    routes: [{ prefix: '', transport: 'sim' }],
  }));
  return path;
}

describe('smsgate serve', () => {
  it('serves /health on the simulator default and exits 0 on SIGTERM', async () => {
    const gateway = await GatewayProcess.spawn(simulatorConfig('ok', 0));
    const response = await fetch(`${gateway.baseUrl}/health`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('Healthy');
    expect(await gateway.stop()).toBe(0);
  });

  it('takes its config file from SMSGATE_CONFIG', async () => {
    const gateway = await GatewayProcess.spawn(simulatorConfig('env', 0), { configVia: 'env' });
    expect(gateway.logLines.some((line) => line.includes('listening on http://127.0.0.1:'))).toBe(true);
    expect(await gateway.stop()).toBe(0);
  });

  it('exits 1 with a clear message when the port is taken, instead of hanging', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => resolve()));
    const port = (busy.address() as { port: number }).port;
    try {
      const { code, stderr } = await runCli(['serve', '--config', simulatorConfig('busy', port)]);
      expect(code).toBe(1);
      expect(stderr).toContain('EADDRINUSE');
    } finally {
      busy.close();
    }
  });

  it('exits 2 with the usage line on a bad argument', async () => {
    const { code, stderr } = await runCli(['serve', '--port', '1']);
    expect(code).toBe(2);
    expect(stderr).toContain('usage: smsgate serve [--config FILE]');
  });

  it('exits 1 naming the file and key when the config is invalid', async () => {
    const path = join(dir, 'bad.json');
    writeFileSync(path, JSON.stringify({ database: { path: join(dir, 'bad.sqlite') }, transports: [{ name: 'sim', type: 'simulator', speed: 3 }], routes: [] }));
    const { code, stderr } = await runCli(['serve'], { SMSGATE_CONFIG: path });
    expect(code).toBe(1);
    expect(stderr).toContain('bad.json');
    expect(stderr).toContain('speed');
  });

  it('refuses database.url (PostgreSQL) with exit 1 and a message naming the key, serving nothing from a SQLite file', async () => {
    const path = join(dir, 'pg.json');
    // The default database.path, relative to the working directory: no SQLite file is opened instead.
    const sqlite = join(dir, 'data', 'smsgate.sqlite');
    // Nothing listens there: serve must refuse before it connects anywhere.
    writeFileSync(path, JSON.stringify({ database: { url: 'postgresql://smsgate@127.0.0.1:9/smsgate' }, transports: [{ name: 'sim', type: 'simulator' }], routes: [{ prefix: '', transport: 'sim' }] }));
    const { code, stderr } = await runCli(['serve'], { SMSGATE_CONFIG: path });
    expect(code).toBe(1);
    expect(stderr).toContain('database.url');
    expect(stderr).toContain('smsgate serve runs on SQLite (database.path) in this version');
    expect(existsSync(sqlite)).toBe(false);
  });
});
