/**
 * Statements the PostgreSQL engine sends per materialise pass and per claim, counted on the wire
 * (every query a pooled client sends, BEGIN and COMMIT included), through EngineBackend on a real
 * server. Materialising is set-based: the count does not grow with the recipients of the pass or
 * with how many of them no route matches (each finished at once with its status and webhook), and
 * a claim's count does not grow with the campaigns it is shared among.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/log.js';
import { CampaignPlans } from '../../src/engine/campaign-plans.js';
import { ENGINE_DEFAULTS } from '../../src/engine/config.js';
import { PgEngineBackend } from '../../src/engine/postgres/backend.js';
import { RouteTable } from '../../src/engine/routing.js';
import { rows, type PgPool } from '../../src/store/postgres/pool.js';
import { msisdns, seedCampaign, seedClient } from '../engine/pg-engine-harness.js';
import { usePostgresSuite } from '../support/postgres-suite.js';

const suite = usePostgresSuite();

/** Counts the statements every pg client sends while `counting` is on. */
const wire = { counting: false, statements: 0 };
const originalQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (wire.counting) wire.statements++;
  return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;
afterEach(() => {
  wire.counting = false;
});

async function counted<T>(run: () => Promise<T>): Promise<{ result: T; statements: number }> {
  wire.statements = 0;
  wire.counting = true;
  try {
    return { result: await run(), statements: wire.statements };
  } finally {
    wire.counting = false;
  }
}

function backendOn(pool: PgPool, nodeId: string | null = 'node-a'): PgEngineBackend {
  return new PgEngineBackend({
    pool,
    node: { nodeId: () => nodeId },
    config: ENGINE_DEFAULTS,
    logger: silentLogger(),
    deliveryReceipts: { wake: () => undefined },
    // Numbers starting 35386 match no route: their parts are NO_ROUTE at once.
    routing: { routes: new RouteTable([{ prefix: '35387', transport: 'carrier' }]), knownTransports: new Set(['carrier']) },
    plans: new CampaignPlans(),
    now: () => Date.now(),
  });
}

// Two SMS parts (GSM-7, over 160 characters).
const LONG_TEXT = 'x'.repeat(200);

describe('statements per step on PostgreSQL', () => {
  it('materialises a pass in a fixed number of statements, whatever its recipients and NO_ROUTE ones', async () => {
    const { pool } = await suite.open();
    const client = await seedClient(pool);
    const backend = backendOn(pool);
    const small = await seedCampaign(pool, { clientId: client, text: LONG_TEXT, msisdns: msisdns(10) });
    const first = await counted(() => backend.materializeDue(Date.now(), 500));
    expect(first.result.recipients).toBe(10);
    const large = await seedCampaign(pool, { clientId: client, text: LONG_TEXT, msisdns: [...msisdns(380), ...msisdns(20, '35386')] });
    const second = await counted(() => backend.materializeDue(Date.now(), 500));
    expect(second.result.recipients).toBe(400);
    expect(second.result.queuedByTransport.get('carrier')).toBe(760);
    expect(second.result.webhooksEnqueued).toBe(true);
    // The 20 unrouted recipients are undelivered with one webhook each, in the same pass.
    const unrouted = await rows<{ status: string; last_status: string }>(pool,
      `SELECT status, last_status FROM recipients WHERE campaign_id = $1 AND msisdn LIKE '35386%'`, [large]);
    expect(unrouted).toHaveLength(20);
    expect(unrouted.every((r) => r.status === 'undelivered' && r.last_status === 'NO_ROUTE')).toBe(true);
    expect(await rows(pool, 'SELECT id FROM webhook_outbox')).toHaveLength(20);
    expect(await rows(pool, 'SELECT id FROM message_parts WHERE campaign_id = $1', [small])).toHaveLength(20);
    console.log(`materialise: ${first.statements} statements for 10 recipients; ${second.statements} for 400 (20 NO_ROUTE), ${(second.statements / 400).toFixed(3)} per recipient`);
    // BEGIN, due campaigns, recipients taken, parts, dispatched marks, campaigns closed, COMMIT; a pass
    // that finishes recipients at once adds their statuses and their outbox rows: one statement each.
    expect(first.statements).toBe(7);
    expect(second.statements).toBe(first.statements + 2);
  });

  it('claims in a fixed number of statements, whatever the campaigns it is shared among', async () => {
    const { pool } = await suite.open();
    const client = await seedClient(pool);
    const backend = backendOn(pool);
    for (let i = 0; i < 5; i++) await seedCampaign(pool, { clientId: client, msisdns: msisdns(40, `3538${7}${i}`) });
    await backend.materializeDue(Date.now(), 500);
    const claimer = backend.claimerFor('carrier');
    const one = await counted(() => claimer.claim(Date.now(), 100, 'node-a'));
    expect(one.result.flat()).toHaveLength(100);
    // Five campaigns, 20 each: the claim is shared evenly and interleaved.
    const perCampaign = new Map<string, number>();
    for (const message of one.result) perCampaign.set(message[0]!.campaign_id, (perCampaign.get(message[0]!.campaign_id) ?? 0) + 1);
    expect([...perCampaign.values()]).toEqual([20, 20, 20, 20, 20]);
    const claimed = await rows<{ claimed_by: string }>(pool, `SELECT claimed_by FROM message_parts WHERE state = 'submitting'`);
    expect(claimed.length).toBe(100);
    expect(claimed.every((r) => r.claimed_by === 'node-a')).toBe(true);
    console.log(`claim: ${one.statements} statements for 100 parts over 5 campaigns`);
    // The candidates with their due counts, then one statement claiming every campaign's share.
    expect(one.statements).toBe(2);
  });
});
