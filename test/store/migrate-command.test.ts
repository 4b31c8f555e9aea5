/**
 * `smsgate migrate --config FILE` against PostgreSQL (`database.url`) applies every
 * migration and prints them, then reports the database up to date; the URL is printed without its
 * password; an unreachable server is a message and exit 1. (SQLite: test/cli/admin.test.ts.)
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as migrate } from '../../src/cli/commands/migrate.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { captureCliOutput } from '../support/cli-output.js';
import { freePort } from '../support/free-port.js';
import { REPO_ROOT } from '../support/gateway-process.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';

/** The built CLI (`npm test` builds first), as the package's `smsgate` bin runs it. */
const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

function smsgate(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'smsgate-migrate-pg-'));
let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

function configWith(url: string): string {
  const file = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ database: { url } }));
  return file;
}

describe('smsgate migrate on PostgreSQL', () => {
  it('applies every migration, prints them, then reports the database up to date', async () => {
    const url = await server.createDatabase();
    const config = configWith(url);
    const first = await captureCliOutput(() => migrate(['--config', config, '--json']));
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ database: url, applied: MIGRATIONS.map((m) => new m().name) });
    const second = await captureCliOutput(() => migrate(['--config', config]));
    expect(second).toEqual({ code: 0, stdout: `${url}: up to date\n`, stderr: '' });
  });

  it('names the database without its password', async () => {
    const url = (await server.createDatabase()).replace('smsgate@', 'smsgate:hunter2@');
    const result = await captureCliOutput(() => migrate(['--config', configWith(url)]));
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^postgresql:\/\/smsgate:\*\*\*@127\.0\.0\.1:\d+\/t_\d+_\d+: applied InitialSchema1763740000000, /);
    expect(result.stdout + result.stderr).not.toContain('hunter2');
  });

  it('exits 1 with a message naming the database when it cannot connect', async () => {
    const url = `postgresql://gw:hunter2@127.0.0.1:${await freePort()}/smsgate`;
    const result = await captureCliOutput(() => migrate(['--config', configWith(url)]));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^smsgate: cannot connect to PostgreSQL at postgresql:\/\/gw:\*\*\*@127\.0\.0\.1:\d+\/smsgate: .*ECONNREFUSED/);
    expect(result.stderr).not.toContain('hunter2');
  });

  it('works as a real `smsgate migrate` process against a url, the password never printed', async () => {
    const url = (await server.createDatabase()).replace('smsgate@', 'smsgate:hunter2@');
    const config = configWith(url);
    const first = await smsgate('migrate', '--config', config);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`${url.replace(':hunter2@', ':***@')}: applied ${MIGRATIONS.map((m) => new m().name).join(', ')}\n`);
    const second = await smsgate('migrate', '--config', config, '--json');
    expect({ code: second.code, out: JSON.parse(second.stdout) as unknown }).toEqual({ code: 0, out: { database: url.replace(':hunter2@', ':***@'), applied: [] } });
  });
});
