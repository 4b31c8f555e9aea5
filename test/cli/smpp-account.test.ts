/**
 * `smsgate smpp-account add|list|remove|set-password` through the CLI's dispatcher in this process
 * (stdout and stderr captured), against a real SQLite file named by a temp config: what each
 * prints with --json and as text, the hash stored in place of the password, usage errors (exit 2
 * with the usage line: a 9-character password, a bad system id, --max-binds or --allow-ip),
 * unknown client, duplicate and unknown system ids (exit 1 naming them); and the built command's
 * --help, spawned once.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../src/auth/password.js';
import { main } from '../../src/cli/main.js';
import { captureCliOutput, type CliResult } from '../support/cli-output.js';
import { ensureBuilt, REPO_ROOT } from '../support/gateway-process.js';

const dir = mkdtempSync(join(tmpdir(), 'smsgate-smpp-account-cli-'));
const configPath = join(dir, 'smsgate.json');
const dbPath = join(dir, 'gw.sqlite');
const cfg = ['--config', configPath];

const ADD_USAGE = 'usage: smsgate smpp-account add --client NAME --system-id ID --password PW [--max-binds N] [--allow-ip CIDR]... [--config FILE] [--json]\n';

function smsgate(...args: string[]): Promise<CliResult> {
  return captureCliOutput(() => main(args));
}

async function json<T>(...args: string[]): Promise<T> {
  const run = await smsgate(...args, ...cfg, '--json');
  expect(run).toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(run.stdout) as T;
}

function query<T>(sql: string, ...params: unknown[]): T[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

interface Listed { systemId: string; client: string; maxBinds: number | null; allowIps: string[]; createdAt: string; updatedAt: string }

beforeAll(async () => {
  writeFileSync(configPath, JSON.stringify({ database: { path: dbPath } }));
  expect((await smsgate('migrate', ...cfg)).code).toBe(0);
  expect((await smsgate('client', 'create', '--name', 'acme', ...cfg)).code).toBe(0);
  expect((await smsgate('client', 'create', '--name', 'globex', ...cfg)).code).toBe(0);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('smsgate smpp-account', () => {
  it('adds an account with its limits and stores only a hash of the password', async () => {
    const added = await json<Listed>('smpp-account', 'add', '--client', 'acme', '--system-id', 'acme01', '--password', 'k3Y!9qzT',
      '--max-binds', '2', '--allow-ip', '198.51.100.0/24', '--allow-ip=2001:DB8:7::/48', '--allow-ip', '203.0.113.9');
    expect(added).toEqual({
      systemId: 'acme01', client: 'acme', maxBinds: 2, allowIps: ['198.51.100.0/24', '2001:db8:7::/48', '203.0.113.9/32'],
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as string, updatedAt: added.createdAt,
    });
    const [row] = query<{ password_hash: string; allow_ips: string }>('SELECT password_hash, allow_ips FROM smpp_accounts WHERE system_id = ?', 'acme01');
    expect(row?.password_hash).toMatch(/^scrypt\$/);
    expect(row?.password_hash).not.toContain('k3Y!9qzT');
    expect(await verifyPassword('k3Y!9qzT', row?.password_hash ?? '')).toBe(true);
    expect(JSON.parse(row?.allow_ips ?? '')).toEqual(['198.51.100.0/24', '2001:db8:7::/48', '203.0.113.9/32']);

    const text = await smsgate('smpp-account', 'add', '--client', 'globex', '--system-id', 'globex', '--password', 'pw', ...cfg);
    expect(text).toEqual({ code: 0, stdout: 'added SMPP account globex of client globex: no bind limit, from any address\n', stderr: '' });
    expect(text.stdout).not.toContain('pw ');
  });

  it('lists every account, never a password or hash', async () => {
    const listed = await json<Listed[]>('smpp-account', 'list');
    expect(listed.map(({ createdAt: _c, updatedAt: _u, ...rest }) => rest)).toEqual([
      { systemId: 'acme01', client: 'acme', maxBinds: 2, allowIps: ['198.51.100.0/24', '2001:db8:7::/48', '203.0.113.9/32'] },
      { systemId: 'globex', client: 'globex', maxBinds: null, allowIps: [] },
    ]);
    const text = await smsgate('smpp-account', 'list', ...cfg);
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^system-id\s+client\s+max-binds\s+allow-ip\s+created\s+updated$/);
    expect(lines[1]).toMatch(/^acme01\s+acme\s+2\s+198\.51\.100\.0\/24,2001:db8:7::\/48,203\.0\.113\.9\/32\s+\S+Z\s+\S+Z$/);
    expect(lines[2]).toMatch(/^globex\s+globex\s+no limit\s+any\s/);
    expect(text.stdout + JSON.stringify(listed)).not.toMatch(/scrypt|k3Y!9qzT/);
  });

  it('sets a new password: only the new one verifies', async () => {
    const before = query<{ updated_at: number }>('SELECT updated_at FROM smpp_accounts WHERE system_id = ?', 'acme01')[0]?.updated_at ?? 0;
    const result = await json<{ systemId: string; updatedAt: string }>('smpp-account', 'set-password', '--system-id', 'acme01', '--password', 'n3w!Pw8x');
    expect(result.systemId).toBe('acme01');
    const [row] = query<{ password_hash: string; updated_at: number }>('SELECT password_hash, updated_at FROM smpp_accounts WHERE system_id = ?', 'acme01');
    expect(await verifyPassword('n3w!Pw8x', row?.password_hash ?? '')).toBe(true);
    expect(await verifyPassword('k3Y!9qzT', row?.password_hash ?? '')).toBe(false);
    expect(row?.updated_at).toBeGreaterThanOrEqual(before);
    expect(new Date(result.updatedAt).getTime()).toBe(row?.updated_at);
  });

  it('refuses a password over 8 characters, saying why, with the usage line (exit 2) and nothing stored', async () => {
    const run = await smsgate('smpp-account', 'add', '--client', 'acme', '--system-id', 'acme02', '--password', '123456789', ...cfg);
    expect(run).toEqual({
      code: 2, stdout: '',
      stderr: `smsgate: --password is 9 characters: SMPP 3.4 allows at most 8 (9 octets with the NUL); it is refused, not shortened\n${ADD_USAGE}`,
    });
    const reset = await smsgate('smpp-account', 'set-password', '--system-id', 'acme01', '--password', '123456789', ...cfg);
    expect(reset.code).toBe(2);
    expect(reset.stderr).toContain('at most 8');
    expect(reset.stderr).toContain('usage: smsgate smpp-account set-password --system-id ID --password PW');
    expect(reset.stderr).not.toContain('123456789');
    expect(query('SELECT system_id FROM smpp_accounts ORDER BY system_id')).toEqual([{ system_id: 'acme01' }, { system_id: 'globex' }]);
  });

  it('refuses bad system ids, --max-binds and --allow-ip values with the usage line (exit 2)', async () => {
    const add = (...extra: string[]) => smsgate('smpp-account', 'add', '--client', 'acme', '--password', 'pw', ...extra, ...cfg);
    expect(await add('--system-id', 'a-very-long-id-16')).toEqual({
      code: 2, stdout: '', stderr: `smsgate: --system-id 'a-very-long-id-16' is 17 characters: SMPP 3.4 allows at most 15 (16 octets with the NUL)\n${ADD_USAGE}`,
    });
    expect((await add('--system-id', 'two words')).stderr).toContain("--system-id 'two words' must be printable ASCII without spaces");
    expect(await add('--system-id', 'x1', '--max-binds', '0')).toEqual({
      code: 2, stdout: '', stderr: `smsgate: --max-binds '0': must be a whole number from 1 to 1000\n${ADD_USAGE}`,
    });
    expect((await add('--system-id', 'x1', '--max-binds', '1001')).code).toBe(2);
    expect(await add('--system-id', 'x1', '--allow-ip', '10.0.0.0/33')).toEqual({
      code: 2, stdout: '', stderr: `smsgate: --allow-ip '10.0.0.0/33': the prefix length must be a whole number from 0 to 32\n${ADD_USAGE}`,
    });
    expect((await add('--system-id', 'x1', '--allow-ip', 'office')).stderr).toContain("--allow-ip 'office' is not an IPv4 or IPv6 address or CIDR block");
    expect((await smsgate('smpp-account', 'add', '--client', 'acme', '--password', 'pw', '--system-id', 'x1', ...cfg, '--allow-ip')).stderr)
      .toContain('--allow-ip needs a value');
    expect((await smsgate('smpp-account', 'add', '--system-id', 'x1', '--password', 'pw', ...cfg)).stderr).toContain('--client is required');
    expect((await smsgate('smpp-account', 'remove', ...cfg)).stderr).toContain('--system-id is required');
    expect((await smsgate('smpp-account', 'rename', ...cfg)).stderr).toContain("unknown action 'rename'");
    expect((await smsgate('smpp-account', 'list', '--client', 'acme', ...cfg)).code).toBe(2);
    expect(query('SELECT system_id FROM smpp_accounts WHERE system_id = ?', 'x1')).toEqual([]);
  });

  it('names an unknown client, a system id in use and an unknown system id (exit 1), changing nothing', async () => {
    expect(await smsgate('smpp-account', 'add', '--client', 'nobody', '--system-id', 'x2', '--password', 'pw', ...cfg))
      .toEqual({ code: 1, stdout: '', stderr: 'smsgate: no client named "nobody"\n' });
    expect(await smsgate('smpp-account', 'add', '--client', 'globex', '--system-id', 'acme01', '--password', 'pw', ...cfg))
      .toEqual({ code: 1, stdout: '', stderr: 'smsgate: an SMPP account with system id "acme01" already exists\n' });
    expect(await smsgate('smpp-account', 'remove', '--system-id', 'ghost', ...cfg))
      .toEqual({ code: 1, stdout: '', stderr: 'smsgate: no SMPP account with system id "ghost"\n' });
    expect(await smsgate('smpp-account', 'set-password', '--system-id', 'ghost', '--password', 'pw', ...cfg))
      .toEqual({ code: 1, stdout: '', stderr: 'smsgate: no SMPP account with system id "ghost"\n' });
    expect(query('SELECT s.system_id, c.name FROM smpp_accounts s JOIN clients c ON c.id = s.client_id ORDER BY s.system_id'))
      .toEqual([{ system_id: 'acme01', name: 'acme' }, { system_id: 'globex', name: 'globex' }]);
  });

  it('removes an account', async () => {
    expect(await json('smpp-account', 'remove', '--system-id', 'globex')).toEqual({ systemId: 'globex', removed: true });
    expect((await json<Listed[]>('smpp-account', 'list')).map((a) => a.systemId)).toEqual(['acme01']);
    expect(await smsgate('smpp-account', 'remove', '--system-id', 'acme01', ...cfg)).toEqual({ code: 0, stdout: 'removed SMPP account acme01\n', stderr: '' });
    expect(await smsgate('smpp-account', 'list', ...cfg)).toEqual({ code: 0, stdout: 'no SMPP accounts\n', stderr: '' });
  });

  it('the built command prints its usage for --help', () => {
    ensureBuilt();
    const help = execFileSync(process.execPath, [join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js'), 'smpp-account', '--help'], { encoding: 'utf8' });
    expect(help.split('\n').slice(0, 4)).toEqual([
      'usage: smsgate smpp-account add --client NAME --system-id ID --password PW [--max-binds N] [--allow-ip CIDR]... [--config FILE] [--json]',
      '       smsgate smpp-account list [--config FILE] [--json]',
      '       smsgate smpp-account remove --system-id ID [--config FILE] [--json]',
      '       smsgate smpp-account set-password --system-id ID --password PW [--config FILE] [--json]',
    ]);
  }, 120_000);
});
