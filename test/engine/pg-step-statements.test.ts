/**
 * Round trips of the part-changing steps on PostgreSQL: each batch is read with a few set-based
 * statements and written with one statement per kind of change, whatever its size. Counted on a
 * real database through the step stores, in one transaction per batch as PgUnitRunner runs them.
 * (Before the steps were planned, a receipt batch of n one-part recipients took 3 + 3n statements
 * and every failed part 5.)
 */
import { expect, it } from 'vitest';
import { ENGINE_DEFAULTS } from '../../src/engine/config.js';
import { PgOutcomeStepStore, PgReceiptStepStore } from '../../src/engine/postgres/step-stores.js';
import { planOutcomes, type SubmitResult } from '../../src/engine/steps/outcomes.js';
import { planReceipts, type ArrivingReceipt } from '../../src/engine/steps/receipts.js';
import { PgDispatchStore } from '../../src/store/postgres/dispatch-store.js';
import { inTransaction, type PgClient, type PgPool } from '../../src/store/postgres/pool.js';
import type { ClaimablePart } from '../../src/store/sqlite/dispatch-store.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { msisdns, outboxIn, partsOf, recipientsOf, seedCampaign, seedClient } from './pg-engine-harness.js';

const suite = usePostgresSuite();
const TRANSPORT = 'carrier';
const NODE = 'node-a';

/** Runs `body` in one transaction on a connection whose statements are counted. */
async function counted<T>(pool: PgPool, body: (client: PgClient) => Promise<T>): Promise<{ result: T; statements: number }> {
  let statements = 0;
  const result = await inTransaction(pool, (client) => {
    const counting = new Proxy(client, {
      get(target, key, receiver) {
        if (key !== 'query') return Reflect.get(target, key, receiver) as unknown;
        return (...args: unknown[]) => {
          statements++;
          return (target.query as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return body(counting);
  });
  return { result, statements };
}

async function claimedParts(pool: PgPool, count: number): Promise<ClaimablePart[]> {
  const campaign = await seedCampaign(pool, { clientId: await seedClient(pool), msisdns: msisdns(count), state: 'queued' });
  const store = new PgDispatchStore(pool);
  const nowMs = Date.now();
  await store.insertParts((await recipientsOf(pool, campaign)).map((r) => ({
    recipientId: r.id, campaignId: campaign, partNumber: 1, partsTotal: 1, concatReference: 0, transport: TRANSPORT, state: 'queued' as const,
    lastStatus: null, nextAttemptAt: nowMs, finalAt: null,
  })), nowMs);
  return store.claimParts(TRANSPORT, campaign, nowMs, count, NODE);
}

async function writeOutcomes(pool: PgPool, results: SubmitResult[]): Promise<number> {
  const { statements } = await counted(pool, async (client) => {
    const store = new PgOutcomeStepStore(client);
    const nowMs = Date.now();
    await store.writeOutcomes(planOutcomes(results, await store.readOutcomeFacts(results), { config: ENGINE_DEFAULTS, stopping: false, nowMs }), nowMs);
  });
  return statements;
}

it('writes a batch of 20 acceptances in 3 statements, 20 receipts in 6, and 10 failures in 5', async () => {
  const { pool } = await suite.open();
  const parts = await claimedParts(pool, 20);
  const campaign = parts[0]!.campaign_id;
  const accepted = parts.map((p, i): SubmitResult => ({ transport: TRANSPORT, parts: [p], outcomes: [{ part: 1, kind: 'accepted', messageId: `m${i}` }], claimedBy: NODE }));
  // The claimed parts locked with the message ids' locks, the unmatched receipts of those ids, the parts marked.
  expect(await writeOutcomes(pool, accepted)).toBe(3);
  expect((await partsOf(pool, campaign)).every((p) => p.state === 'submitted')).toBe(true);

  const receipts = parts.map((_, i): ArrivingReceipt => ({ transport: TRANSPORT, receipt: { messageId: `m${i}`, status: 'DELIVRD', final: true, raw: `id:m${i}` } }));
  const { statements } = await counted(pool, async (client) => {
    const store = new PgReceiptStepStore(client);
    const nowMs = Date.now();
    await store.writeReceipts(planReceipts(receipts, await store.readReceiptFacts(receipts), nowMs), nowMs);
  });
  // Locks; parts with their recipients; receipts inserted; parts, recipients and outbox rows written.
  expect(statements).toBe(6);
  expect((await recipientsOf(pool, campaign)).map((r) => r.status)).toEqual(Array(20).fill('delivered'));
  expect(await outboxIn(pool)).toHaveLength(20);

  const failing = await claimedParts(pool, 10);
  const failed = failing.map((p): SubmitResult => ({ transport: TRANSPORT, parts: [p], outcomes: [{ part: 1, kind: 'permanent', status: 'REJECTD' }], claimedBy: NODE }));
  // The claimed parts locked; their recipients; the parts failed, the recipients and their outbox rows written.
  expect(await writeOutcomes(pool, failed)).toBe(5);
  expect((await recipientsOf(pool, failing[0]!.campaign_id)).map((r) => [r.status, r.last_status])).toEqual(Array(10).fill(['undelivered', 'REJECTD']));
  expect(await outboxIn(pool)).toHaveLength(30);
});
