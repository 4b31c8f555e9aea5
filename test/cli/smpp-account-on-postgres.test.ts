/**
 * `smsgate smpp-account` against a real throwaway PostgreSQL selected by `database.url`, through
 * the CLI's dispatcher in this process: the same commands, --json shapes and refusals as on
 * SQLite (test/cli/smpp-account.test.ts), the rows written where every node's bind check reads them.
 */
import { describe, expect, it } from 'vitest';
import { verifyPassword } from '../../src/auth/password.js';
import { useCliOnPostgres } from '../support/cli-on-postgres.js';

const { cfg, smsgate, json, query } = useCliOnPostgres('smsgate-smpp-account-pg-');

describe('smsgate smpp-account on PostgreSQL (database.url)', () => {
  it('adds, lists, sets a password and removes accounts, refusing unknown and duplicate ones', async () => {
    expect((await smsgate('migrate', ...cfg)).code).toBe(0);
    expect((await smsgate('client', 'create', '--name', 'acme', ...cfg)).code).toBe(0);
    expect(await json('smpp-account', 'add', '--client', 'acme', '--system-id', 'acme01', '--password', 'k3Y!9qzT', '--max-binds', '3', '--allow-ip', '::ffff:0:0/96'))
      .toMatchObject({ systemId: 'acme01', client: 'acme', maxBinds: 3, allowIps: ['::ffff:0:0/96'] });
    expect(await json('smpp-account', 'add', '--client', 'acme', '--system-id', 'acme02', '--password', 'pw'))
      .toMatchObject({ systemId: 'acme02', maxBinds: null, allowIps: [] });
    const listed = await json<{ systemId: string; createdAt: string }[]>('smpp-account', 'list');
    expect(listed.map((a) => a.systemId)).toEqual(['acme01', 'acme02']);
    expect(JSON.stringify(listed)).not.toContain('scrypt');

    await json('smpp-account', 'set-password', '--system-id', 'acme01', '--password', 'n3w!Pw8x');
    const [row] = await query<{ password_hash: string; max_binds: number }>('SELECT password_hash, max_binds::int AS max_binds FROM smpp_accounts WHERE system_id = $1', ['acme01']);
    expect(row?.max_binds).toBe(3);
    expect(await verifyPassword('n3w!Pw8x', row?.password_hash ?? '')).toBe(true);

    expect(await smsgate('smpp-account', 'add', '--client', 'acme', '--system-id', 'acme02', '--password', 'pw', ...cfg))
      .toEqual({ code: 1, stdout: '', stderr: 'smsgate: an SMPP account with system id "acme02" already exists\n' });
    expect(await smsgate('smpp-account', 'add', '--client', 'nobody', '--system-id', 'x1', '--password', 'pw', ...cfg))
      .toEqual({ code: 1, stdout: '', stderr: 'smsgate: no client named "nobody"\n' });
    expect(await smsgate('smpp-account', 'set-password', '--system-id', 'ghost', '--password', 'pw', ...cfg))
      .toEqual({ code: 1, stdout: '', stderr: 'smsgate: no SMPP account with system id "ghost"\n' });

    expect(await json('smpp-account', 'remove', '--system-id', 'acme02')).toEqual({ systemId: 'acme02', removed: true });
    expect(await query('SELECT system_id FROM smpp_accounts ORDER BY system_id')).toEqual([{ system_id: 'acme01' }]);
    expect(await smsgate('smpp-account', 'remove', '--system-id', 'acme02', ...cfg))
      .toEqual({ code: 1, stdout: '', stderr: 'smsgate: no SMPP account with system id "acme02"\n' });
  });
});
