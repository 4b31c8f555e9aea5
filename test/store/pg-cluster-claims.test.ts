/**
 * PostgreSQL's multi-node units on a real server, several pools standing
 * for several nodes: parts claimed with FOR UPDATE SKIP LOCKED go to exactly one node and a node
 * never waits for another's locked rows; a receipt racing its part's submit_sm_resp write on
 * another node is matched exactly once; outbox events are leased to one node at a time.
 */
import { describe, expect, it } from 'vitest';
import type { PgPool } from '../../src/store/postgres/pool.js';
import { createPgStores, type PgStores } from '../../src/store/postgres/stores.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { T0_MS, dispatchAll, seedClient, seedReadyCampaign } from './conformance/seed.js';

const suite = usePostgresSuite();

interface Node { stores: PgStores; pool: PgPool }

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
      const [taken, stored] = await Promise.all([
        submitter.stores.dispatch.markSubmittedTakingReceipts(part.id, 'carrier', messageId, T0_MS + 1),
        receiver.stores.dispatch.storeReceipt({ transport: 'carrier', messageId, status: 'DELIVRD', final: true, errorCode: null, doneAt: null,
          raw: `id:${messageId}`, receivedAt: T0_MS + 1 }),
      ]);
      // Exactly one side saw the other: the receipt found the part, or the submitter found the parked receipt.
      return { foundByReceipt: stored.part?.id === part.id, foundBySubmitter: (taken ?? []).some((r) => r.id === stored.receiptId) };
    }));
    for (const outcome of outcomes) expect(outcome.foundByReceipt !== outcome.foundBySubmitter).toBe(true);
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

  it('sweeps parked receipts whose message id has been written since, once each, however many nodes sweep', async () => {
    const [a, b] = await nodes(2) as [Node, Node];
    const seeded = await seedReadyCampaign(a.stores, { recipients: 20 });
    await dispatchAll(a.stores, seeded, 'carrier');
    const parts = await a.stores.dispatch.claimParts('carrier', seeded.campaignId, T0_MS, 20);
    // Receipts parked before their ids were written, by a path that did not take them (a lost race, a crash in between).
    for (const [i, part] of parts.entries()) {
      await b.stores.dispatch.insertReceipt({ transport: 'carrier', messageId: `m-${i}`, status: 'DELIVRD', final: true, errorCode: null, doneAt: null,
        raw: 'r', receivedAt: T0_MS, matchState: 'pending', partId: null });
      await a.stores.dispatch.markSubmitted(part.id, `m-${i}`, T0_MS + 1);
    }
    await b.stores.dispatch.insertReceipt({ transport: 'carrier', messageId: 'never-written', status: 'DELIVRD', final: true, errorCode: null,
      doneAt: null, raw: 'r', receivedAt: T0_MS, matchState: 'pending', partId: null });
    const swept = (await Promise.all([a, b, a, b].map(({ stores }) => stores.dispatch.rematchParkedReceipts(5)))).flat();
    const more = await a.stores.dispatch.rematchParkedReceipts(100);
    const all = [...swept, ...more];
    expect(all).toHaveLength(20);
    expect(new Set(all.map((r) => r.id)).size).toBe(20);
    for (const r of all) expect(r.part_id).toBe(parts[Number(r.message_id.slice(2))]?.id);
    expect(await a.stores.dispatch.rematchParkedReceipts(100)).toEqual([]);
    expect((await a.stores.dispatch.expireReceipts(T0_MS + 1)).map((r) => r.message_id)).toEqual(['never-written']);
  });
});
