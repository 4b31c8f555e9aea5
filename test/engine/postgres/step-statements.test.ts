/**
 * PostgreSQL only: the statements each engine step sends per batch, counted on the wire (every
 * query any pg client sends while counting is on) on a real server, seeded and read through the
 * conformance rig. Each step reads with a few set-based statements and writes with one statement
 * per kind of change, never per row, so no count grows with the batch:
 *  - the part-changing steps (submit outcomes, receipts) through their step stores, counted inside
 *    one transaction per batch as PgUnitRunner runs them (BEGIN and COMMIT not counted; before the
 *    steps were planned, a receipt batch of n one-part recipients took 3 + 3n statements and every
 *    failed part 5);
 *  - a materialise pass and a claim through EngineBackend (BEGIN and COMMIT counted): the count
 *    does not grow with the recipients of the pass or with how many of them no route matches (each
 *    finished at once with its status and webhook), nor with the campaigns a claim is shared among.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/common/log.js';
import { CampaignPlans } from '../../../src/engine/campaign-plans.js';
import { ENGINE_DEFAULTS } from '../../../src/engine/config.js';
import { PgEngineBackend } from '../../../src/engine/postgres/backend.js';
import { PgOutcomeStepStore, PgReceiptStepStore } from '../../../src/engine/postgres/step-stores.js';
import { RouteTable } from '../../../src/engine/routing.js';
import { planOutcomes, type SubmitResult } from '../../../src/engine/steps/outcomes.js';
import { planReceipts, type ArrivingReceipt } from '../../../src/engine/steps/receipts.js';
import { PgDispatchStore } from '../../../src/store/postgres/dispatch-store.js';
import { inTransaction, type PgPool } from '../../../src/store/postgres/pool.js';
import type { ClaimablePart } from '../../../src/store/sqlite/dispatch-store.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';
import { msisdns, postgresEngineRig, type EngineRig } from '../conformance/engine-backends.js';

const suite = usePostgresSuite();
const TRANSPORT = 'carrier';
const NODE = 'node-a';

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

async function opened(): Promise<{ pool: PgPool; rig: EngineRig }> {
  const { pool } = await suite.open();
  return { pool, rig: postgresEngineRig(pool, suite.afterThisTest) };
}

/** `count` one-part recipients of a new campaign, queued on TRANSPORT and claimed by NODE. */
async function claimedParts(pool: PgPool, rig: EngineRig, count: number): Promise<ClaimablePart[]> {
  // Not ready: no engine would materialise it; its parts are inserted here.
  const campaign = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(count), ready: false });
  const nowMs = Date.now();
  await rig.stores.dispatch.insertParts((await rig.recipients(campaign)).map((r) => ({
    recipientId: r.id, campaignId: campaign, partNumber: 1, partsTotal: 1, concatReference: 0, transport: TRANSPORT, state: 'queued' as const,
    lastStatus: null, nextAttemptAt: nowMs, finalAt: null,
  })), nowMs);
  return new PgDispatchStore(pool).claimParts(TRANSPORT, campaign, nowMs, count, NODE);
}

/** The statements of one outcome batch's read and write, inside its transaction. */
function writeOutcomes(pool: PgPool, results: SubmitResult[]): Promise<number> {
  return inTransaction(pool, async (client) => {
    const store = new PgOutcomeStepStore(client);
    const nowMs = Date.now();
    const { statements } = await counted(async () =>
      store.writeOutcomes(planOutcomes(results, await store.readOutcomeFacts(results), { config: ENGINE_DEFAULTS, stopping: false, nowMs }), nowMs));
    return statements;
  });
}

/** The statements of one receipt batch's read and write, inside its transaction. */
function writeReceipts(pool: PgPool, receipts: ArrivingReceipt[]): Promise<number> {
  return inTransaction(pool, async (client) => {
    const store = new PgReceiptStepStore(client);
    const nowMs = Date.now();
    const { statements } = await counted(async () => store.writeReceipts(planReceipts(receipts, await store.readReceiptFacts(receipts), nowMs), nowMs));
    return statements;
  });
}

function backendOn(pool: PgPool, nodeId: string | null = NODE): PgEngineBackend {
  return new PgEngineBackend({
    pool,
    node: { nodeId: () => nodeId },
    config: ENGINE_DEFAULTS,
    logger: silentLogger(),
    deliveryReceipts: { wake: () => undefined },
    // Numbers starting 35386 match no route: their parts are NO_ROUTE at once.
    routing: () => ({ routes: new RouteTable([{ prefix: '35387', transport: TRANSPORT }]), conditions: new Map([[TRANSPORT, { up: true as const }]]) }),
    plans: new CampaignPlans(),
    now: () => Date.now(),
  });
}

// Two SMS parts (GSM-7, over 160 characters).
const LONG_TEXT = 'x'.repeat(200);

describe('statements per step on PostgreSQL', () => {
  it('writes a batch of 20 acceptances in 3 statements, 20 receipts in 6, and 10 failures in 5', async () => {
    const { pool, rig } = await opened();
    const parts = await claimedParts(pool, rig, 20);
    const campaign = parts[0]!.campaign_id;
    const accepted = parts.map((p, i): SubmitResult => ({ transport: TRANSPORT, parts: [p], outcomes: [{ part: 1, kind: 'accepted', messageId: `m${i}` }], claimedBy: NODE }));
    // The claimed parts locked with the message ids' locks, the unmatched receipts of those ids, the parts marked.
    expect(await writeOutcomes(pool, accepted)).toBe(3);
    expect((await rig.parts(campaign)).every((p) => p.state === 'submitted')).toBe(true);

    const receipts = parts.map((_, i): ArrivingReceipt => ({ transport: TRANSPORT, receipt: { messageId: `m${i}`, status: 'DELIVRD', final: true, raw: `id:m${i}` } }));
    // Locks; parts with their recipients; receipts inserted; parts, recipients and outbox rows written.
    expect(await writeReceipts(pool, receipts)).toBe(6);
    expect((await rig.recipients(campaign)).map((r) => r.status)).toEqual(Array(20).fill('delivered'));
    expect(await rig.outbox()).toHaveLength(20);

    const failing = await claimedParts(pool, rig, 10);
    const failed = failing.map((p): SubmitResult => ({ transport: TRANSPORT, parts: [p], outcomes: [{ part: 1, kind: 'permanent', status: 'REJECTD' }], claimedBy: NODE }));
    // The claimed parts locked; their recipients; the parts failed, the recipients and their outbox rows written.
    expect(await writeOutcomes(pool, failed)).toBe(5);
    expect((await rig.recipients(failing[0]!.campaign_id)).map((r) => [r.status, r.last_status])).toEqual(Array(10).fill(['undelivered', 'REJECTD']));
    expect(await rig.outbox()).toHaveLength(30);
  });

  it('materialises a pass in a fixed number of statements, whatever its recipients and NO_ROUTE ones', async () => {
    const { pool, rig } = await opened();
    const client = await rig.seedClient();
    const backend = backendOn(pool);
    const small = await rig.seedCampaign({ clientId: client, text: LONG_TEXT, msisdns: msisdns(10) });
    const first = await counted(() => backend.materializeDue(Date.now(), 500));
    expect(first.result.recipients).toBe(10);
    const large = await rig.seedCampaign({ clientId: client, text: LONG_TEXT, msisdns: [...msisdns(380), ...msisdns(20, '35386')] });
    const second = await counted(() => backend.materializeDue(Date.now(), 500));
    expect(second.result.recipients).toBe(400);
    expect(second.result.queuedByTransport.get(TRANSPORT)).toBe(760);
    expect(second.result.webhooksEnqueued).toBe(true);
    // The 20 unrouted recipients are undelivered with one webhook each, in the same pass.
    const unrouted = (await rig.recipients(large)).filter((r) => r.msisdn.startsWith('35386'));
    expect(unrouted).toHaveLength(20);
    expect(unrouted.every((r) => r.status === 'undelivered' && r.last_status === 'NO_ROUTE')).toBe(true);
    expect(await rig.outbox()).toHaveLength(20);
    expect(await rig.parts(small)).toHaveLength(20);
    console.log(`materialise: ${first.statements} statements for 10 recipients; ${second.statements} for 400 (20 NO_ROUTE), ${(second.statements / 400).toFixed(3)} per recipient`);
    // BEGIN, due campaigns, recipients taken, parts, dispatched marks, campaigns closed, COMMIT; a pass
    // that finishes recipients at once adds their statuses and their outbox rows: one statement each.
    expect(first.statements).toBe(7);
    expect(second.statements).toBe(first.statements + 2);
  });

  it('reroutes a batch of queued parts in one read and one write, whatever their number', async () => {
    const { pool, rig } = await opened();
    const backend = backendOn(pool);
    await rig.seedCampaign({ clientId: await rig.seedClient(), text: LONG_TEXT, msisdns: msisdns(150) });
    await backend.materializeDue(Date.now(), 500);
    // The route now sends 35387 to 'other', up: every queued part moves there.
    const routing = { routes: new RouteTable([{ prefix: '35387', transport: 'other' }]), conditions: new Map([[TRANSPORT, { up: true as const }], ['other', { up: true as const }]]) };
    const moved = await counted(() => backend.rerouteBatch({ afterId: 0, limit: 1_000, transports: null, dueByMs: null }, routing, Date.now()));
    expect(moved.result.read).toBe(300);
    expect(moved.result.applied).toHaveLength(300);
    expect(moved.result.applied.every((c) => c.from === TRANSPORT && c.to === 'other')).toBe(true);
    // BEGIN, the queued parts read, the moves written, COMMIT.
    expect(moved.statements).toBe(4);
    const transports = await rig.sql<{ transport: string }>(`SELECT DISTINCT transport FROM message_parts`);
    expect(transports).toEqual([{ transport: 'other' }]);
  });

  it('claims in a fixed number of statements, whatever the campaigns it is shared among', async () => {
    const { pool, rig } = await opened();
    const client = await rig.seedClient();
    const backend = backendOn(pool);
    for (let i = 0; i < 5; i++) await rig.seedCampaign({ clientId: client, msisdns: msisdns(40, `35387${i}`) });
    await backend.materializeDue(Date.now(), 500);
    const claimer = backend.claimerFor(TRANSPORT);
    const one = await counted(() => claimer.claim(Date.now(), 100, NODE));
    expect(one.result.flat()).toHaveLength(100);
    // Five campaigns, 20 each: the claim is shared evenly and interleaved.
    const perCampaign = new Map<string, number>();
    for (const message of one.result) perCampaign.set(message[0]!.campaign_id, (perCampaign.get(message[0]!.campaign_id) ?? 0) + 1);
    expect([...perCampaign.values()]).toEqual([20, 20, 20, 20, 20]);
    const claimed = await rig.sql<{ claimed_by: string }>(`SELECT claimed_by FROM message_parts WHERE state = 'submitting'`);
    expect(claimed.length).toBe(100);
    expect(claimed.every((r) => r.claimed_by === NODE)).toBe(true);
    console.log(`claim: ${one.statements} statements for 100 parts over 5 campaigns`);
    // The candidates with their due counts, then one statement claiming every campaign's share.
    expect(one.statements).toBe(2);
  });
});
