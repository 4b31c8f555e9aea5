/**
 * `smsgate credits` and `smsgate client set-rate` against a real throwaway PostgreSQL selected by
 * `database.url`, through the CLI's dispatcher: the same commands and --json shapes as on SQLite
 * (test/cli/credits.test.ts), the rows written where the gateway's nodes read them.
 */
import { describe, expect, it } from 'vitest';
import { useCliOnPostgres } from '../support/cli-on-postgres.js';

const { cfg, smsgate, json, query } = useCliOnPostgres('smsgate-credits-pg-');

describe('smsgate credits on PostgreSQL (database.url)', () => {
  it('gives, corrects, sets and shows credits, and lists the ledger newest first', async () => {
    expect((await smsgate('migrate', ...cfg)).code).toBe(0);
    expect((await smsgate('client', 'create', '--name', 'acme', ...cfg)).code).toBe(0);
    expect(await json('credits', 'show', '--client', 'acme')).toEqual({ client: 'acme', unlimited: true, balance: 0, reserved: 0, available: 0 });
    expect(await json('credits', 'add', '--client', 'acme', '--credits', '10000', '--note', 'opening')).toEqual({ client: 'acme', unlimited: false, balance: 10000, reserved: 0, available: 10000 });
    expect(await json('credits', 'add', '--client', 'acme', '--credits', '-500')).toMatchObject({ balance: 9500, available: 9500 });
    expect(await json('credits', 'set', '--client', 'acme', '--credits', '9000')).toMatchObject({ balance: 9000, unlimited: false });
    const history = await json<{ at: string; kind: string; credits: number; campaignId: string | null; note: string | null }[]>('credits', 'history', '--client', 'acme');
    expect(history.map(({ at: _at, ...row }) => row)).toEqual([
      { kind: 'correction', credits: -500, campaignId: null, note: 'set to 9000' },
      { kind: 'correction', credits: -500, campaignId: null, note: null },
      { kind: 'top-up', credits: 10000, campaignId: null, note: 'opening' },
    ]);
    expect(new Date(history[0]?.at ?? '').toISOString()).toBe(history[0]?.at);
    expect((await json<unknown[]>('credits', 'history', '--client', 'acme', '--limit', '1'))).toHaveLength(1);
    expect(await json('credits', 'unlimited', '--client', 'acme')).toEqual({ client: 'acme', unlimited: true, balance: 9000, reserved: 0, available: 9000 });
    const [sums] = await query<{ balance: number; ledger: string }>(
      'SELECT cc.balance::int AS balance, (SELECT SUM(credits) FROM credit_ledger)::text AS ledger FROM client_credits cc');
    expect(sums).toEqual({ balance: 9000, ledger: '9000' });
    expect(await smsgate('credits', 'add', '--client', 'nobody', '--credits', '5', ...cfg)).toEqual({ code: 1, stdout: '', stderr: 'smsgate: no client named "nobody"\n' });
  });

  it('sets and removes a client send rate', async () => {
    expect(await json('client', 'set-rate', '--name', 'acme', '--parts-per-second', '50')).toEqual({ name: 'acme', partsPerSecond: 50 });
    expect(await query('SELECT parts_per_second::int AS pps FROM client_send_rates')).toEqual([{ pps: 50 }]);
    expect(await json('client', 'set-rate', '--name', 'acme', '--unlimited')).toEqual({ name: 'acme', partsPerSecond: null });
    expect(await query('SELECT * FROM client_send_rates')).toEqual([]);
  });
});
