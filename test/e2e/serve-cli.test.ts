/**
 * `smsgate serve` as a real process: it applies migrations and listens on the configured
 * simulator default, stops cleanly on SIGTERM (exit 0), and fails fast with a clear message and
 * exit code when it cannot run (bad arguments 2, busy port or bad config 1). On PostgreSQL
 * (database.url) it is a node of a cluster: it joins, serves and leaves on SIGTERM; it
 * refuses a url without database.keyFile, and a key file that does not open the cluster's secrets.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, GatewayProcess, REPO_ROOT } from '../support/gateway-process.js';
import { tempDir } from './e2e-setup.js';
import { killPeer, spawnPeer } from '../support/peer-process.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';

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
      // The port in use is named by its config key (and the file), as the admin port's is.
      expect(stderr).toContain(`api.port ${port} is in use`);
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
});

describe('smsgate serve on PostgreSQL (database.url)', () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  function postgresConfig(name: string, database: Record<string, unknown>): string {
    const path = join(dir, `${name}.json`);
    writeFileSync(path, JSON.stringify({ database, api: { host: '127.0.0.1', port: 0 }, transports: [{ name: 'sim', type: 'simulator' }], routes: [{ prefix: '', transport: 'sim' }] }));
    return path;
  }

  async function nodeCount(url: string): Promise<number> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM cluster_nodes')).rows[0]!.n;
    } finally {
      await client.end();
    }
  }

  it('serves as a node of the cluster: joins, answers /health, and leaves on SIGTERM with exit 0', async () => {
    const url = await server.createDatabase();
    const gateway = await GatewayProcess.spawn(postgresConfig('pg-ok', { url, keyFile: join(dir, 'pg-ok.key') }));
    const response = await fetch(`${gateway.baseUrl}/health`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('Healthy');
    expect(await nodeCount(url)).toBe(1);
    expect(await gateway.stop()).toBe(0);
    expect(await nodeCount(url)).toBe(0);
  });

  it('exits 1 naming database.keyFile and the file when a url comes without a keyFile, touching no SQLite file', async () => {
    const path = postgresConfig('pg-nokey', { url: await server.createDatabase() });
    // The default database.path, relative to the working directory: nothing is created there.
    const sqlite = join(dir, 'data', 'smsgate.sqlite');
    const { code, stderr } = await runCli(['serve'], { SMSGATE_CONFIG: path });
    expect(code).toBe(1);
    expect(stderr).toContain(`${path}: database.keyFile: required with database.url`);
    expect(existsSync(sqlite)).toBe(false);
    expect(existsSync(join(dir, 'data', 'smsgate.key'))).toBe(false);
  });

  it("exits 1 naming database.keyFile when its key does not open the cluster's secrets", async () => {
    const url = await server.createDatabase();
    const first = await GatewayProcess.spawn(postgresConfig('pg-key-a', { url, keyFile: join(dir, 'pg-key-a.key') }));
    expect(await first.stop()).toBe(0);
    // Another valid key: 32 random bytes in base64, as the README makes one.
    writeFileSync(join(dir, 'pg-key-b.key'), `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    const { code, stderr } = await runCli(['serve', '--config', postgresConfig('pg-key-b', { url, keyFile: join(dir, 'pg-key-b.key') })]);
    expect(code).toBe(1);
    expect(stderr).toContain('database.keyFile');
    expect(stderr).toContain('every node of a cluster must use the same key file');
    expect(await nodeCount(url)).toBe(0);
    // A node whose key file is missing is refused too, and none is made for it.
    const missing = join(dir, 'pg-key-missing.key');
    const third = await runCli(['serve', '--config', postgresConfig('pg-key-c', { url, keyFile: missing })]);
    expect(third.code).toBe(1);
    expect(third.stderr).toContain(`database.keyFile: ${missing} does not exist`);
    expect(existsSync(missing)).toBe(false);
  });
});
