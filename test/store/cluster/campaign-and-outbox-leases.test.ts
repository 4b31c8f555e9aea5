/**
 * Several pools standing for several nodes: each campaign is
 * processed to ready by one node (claimForProcessing stamps campaigns.processing_by, the node's
 * later writes are fenced on it), and an outbox event is attempted by one node at a time (a lease on
 * webhook_outbox.leased_by / lease_until, the attempt's result fenced on it). When a node's lease in
 * the nodes table runs out, NodeRegistry.reapExpired([requeueExpiredNodes]) hands its campaigns and
 * events to the live nodes at once, and the stalled node's late writes are refused.
 */
import { describe, expect, it } from 'vitest';
import { NodeRegistry } from '../../../src/store/postgres/node-registry.js';
import { requeueExpiredNodes } from '../../../src/store/postgres/node-takeover.js';
import type { PgPool } from '../../../src/store/postgres/pool.js';
import { createPgStores, type PgStores } from '../../../src/store/postgres/stores.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';
import { T0_MS, seedClient } from '../conformance/seed.js';

const suite = usePostgresSuite();

interface Node { stores: PgStores; pool: PgPool }

/** `count` nodes on one fresh database, each with its own pool. */
async function nodes(count: number): Promise<Node[]> {
  return (await suite.openNodes(count)).map((database) => ({ stores: createPgStores(database.pool), pool: database.pool }));
}

async function queuedCampaign(stores: PgStores, clientId: number, userId: number, id: string): Promise<void> {
  await stores.campaigns.insertCampaign({
    id, clientId, userId, state: 'queued', name: 'spring', sender: 'ACME', text: 'hello', sendAtLocal: null,
    createAsDraft: false, shouldSaveList: false, requestRecipientsJson: '[]', createdAtMs: T0_MS,
  });
}

function ready(campaignId: string, totalSent: number) {
  return { campaignId, totalSent, textSent: 'hello', encoding: 'GSM-7', partsPerMessage: 1, sendAtMs: T0_MS, skippedCount: 0, readyAtMs: T0_MS };
}

const recipients = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ msisdn: `${prefix}${String(i).padStart(5, '0')}`, clientReference: null }));

async function campaignRow(pool: PgPool, id: string): Promise<{ state: string; processing_by: string | null; recipients: number }> {
  const found = await pool.query<{ state: string; processing_by: string | null; recipients: number }>(
    `SELECT state, processing_by, (SELECT count(*)::int FROM recipients WHERE campaign_id = $1) AS recipients FROM campaigns WHERE id = $1`, [id]);
  return found.rows[0]!;
}

/** A stalled node (lease 150 ms, never heartbeating) and a live one, on `pool`. */
async function stalledAndLive(pool: PgPool): Promise<{ stalled: NodeRegistry; live: NodeRegistry }> {
  const stalled = await NodeRegistry.join(pool, { leaseMs: 150 });
  const live = await NodeRegistry.join(pool, { leaseMs: 60_000 });
  suite.afterThisTest(async () => {
    await live.leave();
    await stalled.leave();
  });
  return { stalled, live };
}

describe('campaigns processed by one node (PostgreSQL)', () => {
  it('gives each of 20 queued campaigns to exactly one of 4 nodes claiming at once, stamped with its id', async () => {
    const cluster = await nodes(4);
    const { clientId, userId } = await seedClient(cluster[0]!.stores);
    const ids = Array.from({ length: 20 }, (_, i) => `c-${String(i).padStart(4, '0')}`);
    for (const id of ids) await queuedCampaign(cluster[0]!.stores, clientId, userId, id);
    const nodeIds = cluster.map((_, i) => `node-${i}`);
    for (const id of ids) {
      const claims = await Promise.all(cluster.map(({ stores }, i) => stores.campaigns.claimForProcessing(id, nodeIds[i])));
      const winners = claims.flatMap((c, i) => (c === undefined ? [] : [nodeIds[i]]));
      expect(winners).toHaveLength(1);
      expect(claims.find((c) => c !== undefined)?.id).toBe(id);
      expect(await campaignRow(cluster[0]!.pool, id)).toEqual({ state: 'processing', processing_by: winners[0], recipients: 0 });
      // The holder may claim again (a retry after a transient error); no other node may.
      const again = await Promise.all(cluster.map(({ stores }, i) => stores.campaigns.claimForProcessing(id, nodeIds[i])));
      expect(again.flatMap((c, i) => (c === undefined ? [] : [nodeIds[i]]))).toEqual(winners);
    }
  });

  it("hands an expired node's campaign to a live node, whose claim fences the stalled node's late writes out", async () => {
    const [node] = await nodes(1) as [Node];
    const { stores, pool } = node;
    const { clientId, userId } = await seedClient(stores);
    await queuedCampaign(stores, clientId, userId, 'c-1');
    const { stalled, live } = await stalledAndLive(pool);
    const stalledId = stalled.identity.id;
    const liveId = live.identity.id;

    expect((await stores.campaigns.claimForProcessing('c-1', stalledId))?.id).toBe('c-1');
    expect(await stores.campaigns.appendRecipients('c-1', recipients(3, '3538700'), T0_MS, stalledId)).toBe(true);
    // Still held by the stalled node: the live node cannot take it.
    expect(await stores.campaigns.claimForProcessing('c-1', liveId)).toBeUndefined();

    await expect.poll(() => live.liveNodes(), { timeout: 5_000, interval: 25 }).toBe(1);
    expect(await live.reapExpired([requeueExpiredNodes])).toEqual({ nodeIds: [stalledId], requeued: [1] });
    expect(await campaignRow(pool, 'c-1')).toEqual({ state: 'processing', processing_by: null, recipients: 3 });
    expect((await stores.campaigns.claimForProcessing('c-1', liveId))?.id).toBe('c-1');

    // The stalled node wakes: every write of its old claim is refused.
    expect(await stores.campaigns.deletePartialRecipients('c-1', 100, stalledId)).toBeUndefined();
    expect(await stores.campaigns.appendRecipients('c-1', recipients(2, '3538711'), T0_MS, stalledId)).toBe(false);
    expect(await stores.campaigns.markReady(ready('c-1', 5), stalledId)).toBe(false);
    await stores.campaigns.markFailed('c-1', 'late failure', stalledId);
    expect(await campaignRow(pool, 'c-1')).toEqual({ state: 'processing', processing_by: liveId, recipients: 3 });

    // The new holder redoes it from scratch and marks it ready; its stamp is then cleared.
    expect(await stores.campaigns.deletePartialRecipients('c-1', 100, liveId)).toBe(3);
    expect(await stores.campaigns.appendRecipients('c-1', recipients(4, '3538722'), T0_MS, liveId)).toBe(true);
    expect(await stores.campaigns.markReady(ready('c-1', 4), liveId)).toBe(true);
    expect(await campaignRow(pool, 'c-1')).toEqual({ state: 'ready', processing_by: null, recipients: 4 });
    expect(await stores.campaigns.claimForProcessing('c-1', liveId)).toBeUndefined();
  });

  it('lists for a node only the campaigns it may claim, so campaigns other nodes hold never fill its batch', async () => {
    const [node] = await nodes(1) as [Node];
    const { stores } = node;
    const { clientId, userId } = await seedClient(stores);
    for (const id of ['c-1', 'c-2', 'c-3', 'c-4']) await queuedCampaign(stores, clientId, userId, id);
    await stores.campaigns.claimForProcessing('c-1', 'node-b');
    await stores.campaigns.claimForProcessing('c-2', 'node-b');
    await stores.campaigns.claimForProcessing('c-3', 'node-a');
    expect(await stores.campaigns.unprocessedCampaignIds(2, 'node-a')).toEqual(['c-3', 'c-4']);
    expect(await stores.campaigns.unprocessedCampaignIds(2)).toEqual(['c-1', 'c-2']);
  });

  it("lets the holder mark its campaign failed, and no other node's markFailed", async () => {
    const [node] = await nodes(1) as [Node];
    const { stores, pool } = node;
    const { clientId, userId } = await seedClient(stores);
    await queuedCampaign(stores, clientId, userId, 'c-1');
    await stores.campaigns.claimForProcessing('c-1', 'node-a');
    await stores.campaigns.appendRecipients('c-1', recipients(2, '3538700'), T0_MS, 'node-a');
    await stores.campaigns.markFailed('c-1', 'not mine', 'node-b');
    expect(await campaignRow(pool, 'c-1')).toEqual({ state: 'processing', processing_by: 'node-a', recipients: 2 });
    await stores.campaigns.markFailed('c-1', 'BAD_TEXT', 'node-a');
    expect(await campaignRow(pool, 'c-1')).toEqual({ state: 'failed', processing_by: null, recipients: 0 });
  });

  it('keeps the single-gateway semantics without a node id: a processing campaign is claimed again', async () => {
    const [node] = await nodes(1) as [Node];
    const { stores, pool } = node;
    const { clientId, userId } = await seedClient(stores);
    await queuedCampaign(stores, clientId, userId, 'c-1');
    expect((await stores.campaigns.claimForProcessing('c-1'))?.state).toBe('processing');
    expect((await stores.campaigns.claimForProcessing('c-1'))?.state).toBe('processing');
    expect(await stores.campaigns.appendRecipients('c-1', recipients(2, '3538700'), T0_MS)).toBe(true);
    expect(await stores.campaigns.markReady(ready('c-1', 2))).toBe(true);
    expect(await campaignRow(pool, 'c-1')).toEqual({ state: 'ready', processing_by: null, recipients: 2 });
  });
});

describe('outbox events leased to one node (PostgreSQL)', () => {
  async function outbox(stores: PgStores, count: number): Promise<void> {
    const { clientId } = await seedClient(stores);
    for (let i = 0; i < count; i++) await stores.webhooks.insertOutboxRow({ clientId, recipientId: null, body: `{"n":${i}}`, nowMs: T0_MS });
  }

  async function leases(pool: PgPool): Promise<{ id: number; leased_by: string | null; lease_until: number | null; state: string; attempts: number }[]> {
    return (await pool.query<{ id: number; leased_by: string | null; lease_until: number | null; state: string; attempts: number }>(
      'SELECT id, leased_by, lease_until, state, attempts FROM webhook_outbox ORDER BY id')).rows;
  }

  it('never gives one event to two of 3 nodes claiming at once, and stamps each with its claimant', async () => {
    const cluster = await nodes(3);
    await outbox(cluster[0]!.stores, 60);
    const claimed = await Promise.all(cluster.map(async ({ stores }, i) => {
      const mine: number[] = [];
      for (;;) {
        const batch = await stores.webhooks.claimDueOutboxRows(T0_MS, 4, 30_000, `node-${i}`);
        if (batch.length === 0) return mine;
        mine.push(...batch.map((r) => r.id));
      }
    }));
    const all = claimed.flat();
    expect(all).toHaveLength(60);
    expect(new Set(all).size).toBe(60);
    const byId = new Map((await leases(cluster[0]!.pool)).map((r) => [r.id, r]));
    claimed.forEach((ids, i) => {
      for (const id of ids) expect(byId.get(id)).toMatchObject({ leased_by: `node-${i}`, lease_until: T0_MS + 30_000, state: 'pending' });
    });
    // Leased events are not due until the lease ends; the wake-up time says when that is.
    expect(await cluster[0]!.stores.webhooks.claimDueOutboxRows(T0_MS + 30_000, 100, 30_000, 'node-0')).toEqual([]);
    expect(await cluster[0]!.stores.webhooks.earliestPendingAttemptAt()).toBe(T0_MS + 30_001);
  });

  it("gives an expired node's leased events back at once after the reap, and refuses its late results", async () => {
    const [node] = await nodes(1) as [Node];
    const { stores, pool } = node;
    await outbox(stores, 5);
    const { stalled, live } = await stalledAndLive(pool);
    const stalledId = stalled.identity.id;
    const liveId = live.identity.id;
    const held = (await stores.webhooks.claimDueOutboxRows(T0_MS, 10, 60_000, stalledId)).map((r) => r.id);
    expect(held).toHaveLength(5);
    expect(await stores.webhooks.claimDueOutboxRows(T0_MS + 1, 10, 60_000, liveId)).toEqual([]);

    await expect.poll(() => live.liveNodes(), { timeout: 5_000, interval: 25 }).toBe(1);
    expect(await live.reapExpired([requeueExpiredNodes])).toEqual({ nodeIds: [stalledId], requeued: [5] });
    // Due again long before the 60 s lease would have lapsed.
    expect((await stores.webhooks.claimDueOutboxRows(T0_MS + 2, 10, 60_000, liveId)).map((r) => r.id)).toEqual(held);

    // The stalled node's late results are refused; the live node's are written and end its lease.
    const [first, second] = held as [number, number];
    await stores.webhooks.recordAttempts([
      { id: first, kind: 'delivered', attempts: 1, atMs: T0_MS + 3 },
      { id: second, kind: 'dead', attempts: 1, atMs: T0_MS + 3, lastError: 'HTTP 410', reason: 'permanent', url: 'https://hooks.example/dlr' },
    ], stalledId);
    expect((await leases(pool)).every((r) => r.state === 'pending' && r.attempts === 0 && r.leased_by === liveId)).toBe(true);
    await stores.webhooks.recordAttempts([
      { id: first, kind: 'delivered', attempts: 1, atMs: T0_MS + 4 },
      { id: second, kind: 'retry', attempts: 1, nextAttemptAt: T0_MS + 10_000, lastError: 'HTTP 503' },
    ], liveId);
    const after = new Map((await leases(pool)).map((r) => [r.id, r]));
    expect(after.get(first)).toMatchObject({ state: 'delivered', attempts: 1, leased_by: null, lease_until: null });
    expect(after.get(second)).toMatchObject({ state: 'pending', attempts: 1, leased_by: null, lease_until: null });
  });

  it('refuses a late result from a node whose lapsed lease another node took', async () => {
    const [a, b] = await nodes(2) as [Node, Node];
    await outbox(a.stores, 1);
    const [event] = await a.stores.webhooks.claimDueOutboxRows(T0_MS, 1, 30_000, 'node-a');
    expect(await b.stores.webhooks.claimDueOutboxRows(T0_MS + 30_000, 1, 30_000, 'node-b')).toEqual([]);
    expect((await b.stores.webhooks.claimDueOutboxRows(T0_MS + 30_001, 1, 30_000, 'node-b')).map((r) => r.id)).toEqual([event!.id]);
    await a.stores.webhooks.recordAttempts([{ id: event!.id, kind: 'delivered', attempts: 1, atMs: T0_MS + 30_002 }], 'node-a');
    expect(await leases(a.pool)).toEqual([{ id: event!.id, leased_by: 'node-b', lease_until: T0_MS + 60_001, state: 'pending', attempts: 0 }]);
    await b.stores.webhooks.recordAttempts([{ id: event!.id, kind: 'delivered', attempts: 1, atMs: T0_MS + 30_003 }], 'node-b');
    expect(await leases(a.pool)).toEqual([{ id: event!.id, leased_by: null, lease_until: null, state: 'delivered', attempts: 1 }]);
  });
});
