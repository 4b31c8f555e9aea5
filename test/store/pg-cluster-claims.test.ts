/**
 * PostgreSQL's multi-node units on a real server, several pools standing
 * for several nodes: parts claimed with FOR UPDATE SKIP LOCKED go to exactly one node and a node
 * never waits for another's locked rows; a receipt racing its part's submit_sm_resp write on
 * another node is matched exactly once; outbox events are leased to one node at a time.
 */
import { describe, expect, it } from 'vitest';
import { ENGINE_DEFAULTS } from '../../src/engine/config.js';
import { PgOutcomeStepStore, PgReceiptStepStore, PgUnmatchedReceiptStore } from '../../src/engine/postgres/step-stores.js';
import { planOutcomes } from '../../src/engine/steps/outcomes.js';
import { planReceipts } from '../../src/engine/steps/receipts.js';
import { planRematch, type ReceiptMatch } from '../../src/engine/steps/unmatched-receipts.js';
import { inTransaction, rows, type PgPool } from '../../src/store/postgres/pool.js';
import type { ClaimablePart } from '../../src/store/sqlite/dispatch-store.js';
import { createPgStores, type PgStores } from '../../src/store/postgres/stores.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { T0_MS, dispatchAll, seedClient, seedReadyCampaign } from './conformance/seed.js';

const suite = usePostgresSuite();

interface Node { stores: PgStores; pool: PgPool }

/** The outcome step (read, plan, write) for one accepted part, in one transaction: what a submitter's unit does. */
function accept(pool: PgPool, part: ClaimablePart, messageId: string, nowMs: number): Promise<ReceiptMatch[]> {
  return inTransaction(pool, async (client) => {
    const store = new PgOutcomeStepStore(client);
    const results = [{ transport: 'carrier', parts: [part], outcomes: [{ part: part.part_number, kind: 'accepted' as const, messageId }], claimedBy: null }];
    const plan = planOutcomes(results, await store.readOutcomeFacts(results), { config: ENGINE_DEFAULTS, stopping: false, nowMs });
    await store.writeOutcomes(plan, nowMs);
    return plan.matches;
  });
}

/** The receipt step for one receipt, in one transaction: what a receiving node's unit does. Resolves with whether it found its part. */
function receive(pool: PgPool, messageId: string, nowMs: number): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const store = new PgReceiptStepStore(client);
    const items = [{ transport: 'carrier', receipt: { messageId, status: 'DELIVRD', final: true, raw: `id:${messageId}` } }];
    const plan = planReceipts(items, await store.readReceiptFacts(items), nowMs);
    await store.writeReceipts(plan, nowMs);
    return plan.results[0]?.matched === true;
  });
}

/** One pass of the unmatched-receipt sweep, in one transaction. */
function sweep(pool: PgPool, limit: number, nowMs: number): Promise<ReceiptMatch[]> {
  return inTransaction(pool, async (client) => {
    const store = new PgUnmatchedReceiptStore(client);
    const plan = planRematch(await store.readMatchable(limit), nowMs);
    await store.writeMatches(plan, nowMs);
    return plan.matches;
  });
}

/** `count` nodes on one fresh database, each with its own pool. */
async function nodes(count: number): Promise<Node[]> {
  return (await suite.openNodes(count)).map((database) => ({ stores: createPgStores(database.pool), pool: database.pool }));
}

describe('PostgreSQL claims across nodes', () => {
  it('gives each of 200 parts to exactly one of 4 nodes claiming at once', async () => {
    const cluster = await nodes(4);
    const first = cluster[0]!.stores;
    const seeded = await seedReadyCampaign(first, { recipients: 200 });
    await dispatchAll(first, seeded, 'carrier');
    const claimed = await Promise.all(cluster.map(async ({ stores }) => {
      const mine: number[] = [];
      for (;;) {
        const batch = await stores.dispatch.claimParts('carrier', seeded.campaignId, T0_MS, 7);
        if (batch.length === 0) return mine;
        mine.push(...batch.map((p) => p.id));
      }
    }));
    const all = claimed.flat();
    expect(all).toHaveLength(200);
    expect(new Set(all).size).toBe(200);
    expect((await first.status.queuedPartsByTransport(['carrier']))[0]).toEqual({ transport: 'carrier', queued: 0, submitting: 200 });
  });

  it('skips parts another node holds locked instead of waiting for them, and claims in due order', async () => {
    const [a, b] = await nodes(2) as [Node, Node];
    const seeded = await seedReadyCampaign(a.stores, { recipients: 6 });
    await dispatchAll(a.stores, seeded, 'carrier');
    const ids = (await a.stores.dispatch.claimableInCampaign('carrier', seeded.campaignId, T0_MS, 10)).map((p) => p.id);
    const holder = await a.pool.connect();
    try {
      await holder.query('BEGIN');
      // Node A is in the middle of claiming the three oldest parts.
      await holder.query('SELECT id FROM message_parts WHERE id = ANY($1::bigint[]) FOR UPDATE', [ids.slice(0, 3)]);
      // Node B does not wait for A's transaction (a wait would never end: A commits only after this).
      const claimed = await b.stores.dispatch.claimParts('carrier', seeded.campaignId, T0_MS, 10);
      expect(claimed.map((p) => p.id)).toEqual(ids.slice(3));
      expect(claimed[0]).toMatchObject({ campaign_id: seeded.campaignId, part_number: 1, parts_total: 1, attempts: 0 });
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect((await b.stores.dispatch.claimParts('carrier', seeded.campaignId, T0_MS, 10)).map((p) => p.id)).toEqual(ids.slice(0, 3));
  });

  it('matches every receipt exactly once when it races its part\'s submit_sm_resp write on another node', async () => {
    const [submitter, receiver] = await nodes(2) as [Node, Node];
    const seeded = await seedReadyCampaign(submitter.stores, { recipients: 40 });
    await dispatchAll(submitter.stores, seeded, 'carrier');
    const parts = await submitter.stores.dispatch.claimParts('carrier', seeded.campaignId, T0_MS, 40);
    expect(parts).toHaveLength(40);
    const outcomes = await Promise.all(parts.map(async (part, i) => {
      const messageId = `m-${i}`;
      const [matchedBySubmitter, foundByReceipt] = await Promise.all([accept(submitter.pool, part, messageId, T0_MS + 1), receive(receiver.pool, messageId, T0_MS + 1)]);
      // Exactly one side saw the other: the receipt found the part, or the submitter found the unmatched receipt.
      return { foundByReceipt, foundBySubmitter: matchedBySubmitter.some((m) => m.partId === part.id) };
    }));
    for (const outcome of outcomes) expect(outcome.foundByReceipt !== outcome.foundBySubmitter).toBe(true);
    const states = await rows<{ state: string }>(submitter.pool, `SELECT state FROM message_parts WHERE id = ANY($1::bigint[])`, [parts.map((p) => p.id)]);
    expect(states.map((p) => p.state)).toEqual(Array(40).fill('delivered'));
    expect(await receiver.stores.dispatch.expireReceipts(T0_MS + 10)).toEqual([]);
  });

  it('leases an outbox event to one node at a time; an unfinished lease lapses and the event is due again', async () => {
    const [a, b] = await nodes(2) as [Node, Node];
    const { clientId } = await seedClient(a.stores);
    for (let i = 0; i < 30; i++) await a.stores.webhooks.insertOutboxRow({ clientId, recipientId: null, body: `{"n":${i}}`, nowMs: T0_MS });
    const [byA, byB] = await Promise.all([a, b].map(async ({ stores }) => {
      const mine: number[] = [];
      for (;;) {
        const batch = await stores.webhooks.claimDueOutboxRows(T0_MS, 4, 30_000);
        if (batch.length === 0) return mine;
        mine.push(...batch.map((r) => r.id));
      }
    })) as [number[], number[]];
    expect(byA.length + byB.length).toBe(30);
    expect(new Set([...byA, ...byB]).size).toBe(30);
    // Node A finishes its events; B's died with B: they are due again when the lease lapses, not before.
    await a.stores.webhooks.recordAttempts(byA.map((id) => ({ id, kind: 'delivered' as const, attempts: 1, atMs: T0_MS + 1 })));
    expect(await a.stores.webhooks.claimDueOutboxRows(T0_MS + 29_999, 50, 30_000)).toEqual([]);
    expect((await a.stores.webhooks.claimDueOutboxRows(T0_MS + 30_000, 50, 30_000)).map((r) => r.id).sort((x, y) => x - y)).toEqual([...byB].sort((x, y) => x - y));
  });

  it('sweeps unmatched receipts whose message id has been written since, once each, however many nodes sweep', async () => {
    const [a, b] = await nodes(2) as [Node, Node];
    const seeded = await seedReadyCampaign(a.stores, { recipients: 20 });
    await dispatchAll(a.stores, seeded, 'carrier');
    const parts = await a.stores.dispatch.claimParts('carrier', seeded.campaignId, T0_MS, 20);
    // Receipts stored unmatched before their ids were written, by a path that did not take them (a lost race, a crash in between).
    for (const [i, part] of parts.entries()) {
      await b.stores.dispatch.insertReceipt({ transport: 'carrier', messageId: `m-${i}`, status: 'DELIVRD', final: true, errorCode: null, doneAt: null,
        raw: 'r', receivedAt: T0_MS, matchState: 'pending', partId: null });
      await a.stores.dispatch.markSubmitted(part.id, `m-${i}`, T0_MS + 1);
    }
    await b.stores.dispatch.insertReceipt({ transport: 'carrier', messageId: 'never-written', status: 'DELIVRD', final: true, errorCode: null,
      doneAt: null, raw: 'r', receivedAt: T0_MS, matchState: 'pending', partId: null });
    const swept = (await Promise.all([a, b, a, b].map(({ pool }) => sweep(pool, 5, T0_MS + 2)))).flat();
    const more = await sweep(a.pool, 100, T0_MS + 2);
    const all = [...swept, ...more];
    expect(all).toHaveLength(20);
    expect(new Set(all.map((m) => m.receiptId)).size).toBe(20);
    const matched = await rows<{ id: number; message_id: string; part_id: number }>(a.pool, `SELECT id, message_id, part_id FROM receipts WHERE match_state = 'matched'`);
    expect(matched).toHaveLength(20);
    for (const r of matched) expect(r.part_id).toBe(parts[Number(r.message_id.slice(2))]?.id);
    expect(await sweep(a.pool, 100, T0_MS + 2)).toEqual([]);
    expect((await a.stores.dispatch.expireReceipts(T0_MS + 1)).map((r) => r.message_id)).toEqual(['never-written']);
  });
});
