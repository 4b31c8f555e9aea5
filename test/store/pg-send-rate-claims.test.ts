/**
 * A client's send rate across PostgreSQL nodes, at the claim itself: several nodes (each its own
 * pool) claiming the same rated client's parts at the same instant spend its allowance once
 * between them, because each claim locks the client's client_send_rates row (FOR UPDATE) before
 * deciding and advances it in the same transaction. Without the lock each would see the whole
 * burst and together take it several times over. A claim with no rated client stays two
 * statements, and one whose rated client is at its rate takes no lock.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PgFairClaimer } from '../../src/engine/fair-claim.js';
import { createPgStores } from '../../src/store/postgres/stores.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { T0_MS, dispatchAll, seedReadyCampaign } from './conformance/seed.js';

const suite = usePostgresSuite();

/** Counts the statements every pg client sends while `counting` is on. */
const wire = { counting: false, statements: [] as string[] };
const originalQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (wire.counting) {
    const first = args[0] as string | { text?: string; name?: string };
    wire.statements.push(typeof first === 'string' ? first : first.name ?? first.text ?? '?');
  }
  return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;
afterEach(() => {
  wire.counting = false;
});

async function counted<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  wire.statements = [];
  wire.counting = true;
  try {
    return { result: await run(), statements: [...wire.statements] };
  } finally {
    wire.counting = false;
  }
}

describe('send rates in PostgreSQL claims across nodes', () => {
  it('gives 6 nodes claiming a client at 50 a second at the same instant 50 parts between them, and leaves its limiter a second ahead', async () => {
    const databases = await suite.openNodes(6);
    const first = createPgStores(databases[0]!.pool);
    const seeded = await seedReadyCampaign(first, { recipients: 400 });
    await dispatchAll(first, seeded, 'carrier');
    await databases[0]!.pool.query('INSERT INTO client_send_rates (client_id, parts_per_second, next_part_at_us, updated_at) VALUES ($1, 50, 0, $2)', [seeded.clientId, T0_MS]);

    const nowMs = T0_MS + 1_000;
    const claims = await Promise.all(databases.map((db, i) => new PgFairClaimer(db.pool, 'carrier').claim(nowMs, 200, `node-${i}`)));
    const parts = claims.flat(2);
    expect(parts).toHaveLength(50);
    expect(new Set(parts.map((p) => p.id)).size).toBe(50);
    const [row] = (await databases[0]!.pool.query<{ next_part_at_us: number }>('SELECT next_part_at_us FROM client_send_rates WHERE client_id = $1', [seeded.clientId])).rows;
    // 50 parts at 50 a second from nowMs: a second ahead.
    expect(Number(row!.next_part_at_us)).toBe((nowMs + 1_000) * 1_000);

    // Half a second later, 25 have accrued: again once between them.
    const later = await Promise.all(databases.map((db, i) => new PgFairClaimer(db.pool, 'carrier').claim(nowMs + 500, 200, `node-${i}`)));
    expect(later.flat(2)).toHaveLength(25);
  });

  it('claims with no rated client in two statements, and leaves a client at its rate unlocked', async () => {
    const { pool } = await suite.open();
    const stores = createPgStores(pool);
    const seeded = await seedReadyCampaign(stores, { recipients: 20 });
    await dispatchAll(stores, seeded, 'carrier');
    const claimer = new PgFairClaimer(pool, 'carrier');
    const unrated = await counted(() => claimer.claim(T0_MS, 5, 'node-a'));
    expect(unrated.result.flat()).toHaveLength(5);
    expect(unrated.statements).toEqual(['claim-candidates', 'claim-shares']);

    await pool.query('INSERT INTO client_send_rates (client_id, parts_per_second, next_part_at_us, updated_at) VALUES ($1, 5, 0, $2)', [seeded.clientId, T0_MS]);
    const rated = await counted(() => claimer.claim(T0_MS, 10, 'node-a'));
    expect(rated.result.flat()).toHaveLength(5);
    expect(rated.statements).toEqual(['claim-candidates', 'BEGIN', 'claim-lock-send-rates', 'claim-advance-send-rates', 'claim-shares', 'COMMIT']);
    // At its rate now: the claim finds nothing for it and takes no lock.
    const atRate = await counted(() => claimer.claim(T0_MS + 100, 10, 'node-a'));
    expect(atRate.result).toEqual([]);
    expect(atRate.statements).toEqual(['claim-candidates']);
  });
});
