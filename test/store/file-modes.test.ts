/**
 * A fresh database made by `smsgate migrate` or `smsgate serve` (real children,
 * umask 022 as on most systems, under which SQLite alone makes 0644 files) is 0600, and so are
 * its -wal and -shm while serve runs, the secrets key file and the serve lock.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, GatewayProcess, REPO_ROOT, writeGatewayConfig } from '../support/gateway-process.js';
import { tempDir } from '../e2e/e2e-setup.js';

const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
let dir: string;
let previousUmask: number;
let serve: GatewayProcess | undefined;

beforeAll(() => {
  ensureBuilt();
  dir = tempDir('modes');
  // Children inherit it (vitest runs this file in a forked process, where umask may be set).
  previousUmask = process.umask(0o022);
}, 60_000);

afterAll(() => {
  serve?.kill('SIGKILL');
  process.umask(previousUmask);
  rmSync(dir, { recursive: true, force: true });
});

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8);

function configIn(name: string): { path: string; database: string } {
  const written = writeGatewayConfig(join(dir), {
    database: { path: join(dir, name, 'smsgate.sqlite') },
    api: { host: '127.0.0.1', port: 0 },
    logging: { level: 'info' },
    transports: [{ name: 'sim', type: 'simulator' }],
    routes: [{ prefix: '', transport: 'sim' }],
  });
  return { path: written.path, database: written.config.database.path };
}

describe('file modes of a fresh database', () => {
  it('smsgate migrate creates the database 0600', () => {
    const { path, database } = configIn('migrated');
    const result = spawnSync(process.execPath, [CLI, 'migrate', '--config', path], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(modeOf(database)).toBe('600');
  });

  it('smsgate serve creates the database, its -wal and -shm, the key file and the lock 0600', async () => {
    const { path, database } = configIn('served');
    serve = await GatewayProcess.spawn(path);
    for (const file of [database, `${database}-wal`, `${database}-shm`, join(dir, 'served', 'smsgate.key'), `${database}.lock`]) {
      expect(existsSync(file), file).toBe(true);
      expect(modeOf(file), file).toBe('600');
    }
    expect(await serve.stop()).toBe(0);
  }, 60_000);
});
