/**
 * Issue 11 item 2 on a real PostgreSQL: work claimed by a node is stamped with its id, a live node's
 * reap hands an expired node's stamped work back in one transaction (src/store/pg/reap-hooks.ts,
 * run inside NodeRegistry.reapExpired), and the expired node's late outcome writes, fenced on its
 * old stamp, are refused while the new holder's go through. Parts, outbox leases and campaigns.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { inTransaction, type PgPool } from '../../src/store/pg/pool.js';
import { PG_REAP_HOOKS } from '../../src/store/pg/reap-hooks.js';
import { createPgStores, type PgStores } from '../../src/store/pg/stores.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { T0_MS, dispatchAll, seedClient, seedReadyCampaign } from './conformance/seed.js';

let server: PostgresServer;
const closers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  server = await startPostgres();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  await server.stop();
});

interface Node { stores: PgStores; pool: PgPool }

async function twoNodes(): Promise<[Node, Node]> {
  const config = { url: await server.createDatabase(), path: 'unused', synchronous: 'FULL' as const, keyFile: 'unused' };
  const opened: Node[] = [];
  for (const migrate of [true, false]) {
    const database = await openDatabase(config, { migrate });
    closers.push(() => database.close());
    if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
    opened.push({ stores: createPgStores(database.pool), pool: database.pool });
  }
  return opened as [Node, Node];
}

/** What NodeRegistry.reapExpired does with the hooks once it found `expired`: one transaction. */
function reap(pool: PgPool, expired: string[]): Promise<number[]> {
  return inTransaction(pool, async (client) => {
    const moved: number[] = [];
    for (const hook of PG_REAP_HOOKS) moved.push(await hook(client, expired));
    return moved;
  });
}

describe('fencing on PostgreSQL', () => {
  it('requeues an expired node\'s in-flight parts only, and refuses its late outcome writes', async () => {
    const [a, b] = await twoNodes();
    const seeded = await seedReadyCampaign(a.stores, { recipients: 8 });
    await dispatchAll(a.stores, seeded, 'carrier');
    const byA = await a.stores.dispatch.claimParts('carrier', seeded.campaignId, T0_MS, 5, 'node-a');
    const byB = await b.stores.dispatch.claimParts('carrier', seeded.campaignId, T0_MS, 5, 'node-b');
    expect(byA).toHaveLength(5);
    expect(byB).toHaveLength(3);
    // Node A expires; B reaps it: A's five parts, and nothing of B's, are queued again.
    expect(await reap(b.pool, ['node-a'])).toEqual([5, 0, 0]);
    const retaken = await b.stores.dispatch.claimParts('carrier', seeded.campaignId, T0_MS, 10, 'node-b');
    expect(retaken.map((p) => p.id).sort((x, y) => x - y)).toEqual(byA.map((p) => p.id).sort((x, y) => x - y));
    const [first, second, third] = byA as [typeof byA[number], typeof byA[number], typeof byA[number]];
    // A comes back from a stall and writes what its submits got: every write is refused.
    expect(await a.stores.dispatch.markSubmitted(first.id, 'late-1', T0_MS + 1, 'node-a')).toBe(false);
    expect(await a.stores.dispatch.markSubmittedTakingReceipts(second.id, 'carrier', 'late-2', T0_MS + 1, 'node-a')).toBeUndefined();
    expect(await a.stores.dispatch.requeue(third.id, 1, T0_MS + 10, 'THROTTLED', 'X', T0_MS + 1, 'node-a')).toBe(false);
    expect(await a.stores.dispatch.failPart(third.id, 1, 'REJECTD', 'X', T0_MS + 1, 'node-a')).toBe(false);
    // B, which holds them now, writes its outcomes.
    expect(await b.stores.dispatch.markSubmitted(first.id, 'm-1', T0_MS + 2, 'node-b')).toBe(true);
    expect(await b.stores.dispatch.markSubmittedTakingReceipts(second.id, 'carrier', 'm-2', T0_MS + 2, 'node-b')).toEqual([]);
    expect(await b.stores.dispatch.partByMessageId('carrier', 'late-1')).toBeUndefined();
    expect((await b.stores.dispatch.partByMessageId('carrier', 'm-1'))?.id).toBe(first.id);
    // A submitted part is no one's claim any more: a reap of B leaves it alone.
    expect((await reap(a.pool, ['node-b']))[0]).toBe(8 - 2);
  });

  it('makes an expired node\'s outbox leases due at once and refuses its late attempt results', async () => {
    const [a, b] = await twoNodes();
    const { clientId } = await seedClient(a.stores);
    for (let i = 0; i < 3; i++) await a.stores.webhooks.insertOutboxRow({ clientId, recipientId: null, body: `{"n":${i}}`, nowMs: T0_MS });
    const leased = await a.stores.webhooks.claimDueOutboxRows(T0_MS, 10, 60_000, 'node-a');
    expect(leased).toHaveLength(3);
    expect(await b.stores.webhooks.claimDueOutboxRows(T0_MS + 1, 10, 60_000, 'node-b')).toEqual([]);
    expect((await reap(b.pool, ['node-a']))[1]).toBe(3);
    const retaken = await b.stores.webhooks.claimDueOutboxRows(T0_MS + 2, 10, 60_000, 'node-b');
    expect(retaken.map((r) => r.eventId)).toEqual(leased.map((r) => r.eventId));
    await a.stores.webhooks.recordAttempts(leased.map((r) => ({ id: r.id, kind: 'dead' as const, attempts: 4, atMs: T0_MS + 3, lastError: 'HTTP_503',
      reason: 'transient' as const, url: 'https://hooks.example/dlr' })), 'node-a');
    expect(await b.stores.webhooks.countOutboxByState()).toEqual({ pending: 3, delivered: 0, dead: 0 });
    await b.stores.webhooks.recordAttempts(retaken.map((r) => ({ id: r.id, kind: 'delivered' as const, attempts: 1, atMs: T0_MS + 4 })), 'node-b');
    expect(await b.stores.webhooks.countOutboxByState()).toEqual({ pending: 0, delivered: 3, dead: 0 });
  });

  it('lets one node process a campaign; after that node expires another takes it and the first is fenced out', async () => {
    const [a, b] = await twoNodes();
    const { clientId, userId } = await seedClient(a.stores);
    await a.stores.campaigns.insertCampaign({ id: 'c-1', clientId, userId, state: 'queued', name: 'n', sender: 'S', text: 't', sendAtLocal: null,
      createAsDraft: false, shouldSaveList: false, requestRecipientsJson: '[]', createdAtMs: T0_MS });
    expect(await a.stores.campaigns.claimForProcessing('c-1', 'node-a')).toBeDefined();
    // A live peer's campaign is not taken.
    expect(await b.stores.campaigns.claimForProcessing('c-1', 'node-b')).toBeUndefined();
    expect(await a.stores.campaigns.appendRecipients('c-1', [{ msisdn: '1', clientReference: null }], T0_MS, 'node-a')).toBe(true);
    expect((await reap(b.pool, ['node-a']))[2]).toBe(1);
    expect(await b.stores.campaigns.claimForProcessing('c-1', 'node-b')).toBeDefined();
    expect(await a.stores.campaigns.appendRecipients('c-1', [{ msisdn: '2', clientReference: null }], T0_MS, 'node-a')).toBe(false);
    expect(await a.stores.campaigns.deletePartialRecipients('c-1', 100, 'node-a')).toBeUndefined();
    const ready = { campaignId: 'c-1', totalSent: 1, textSent: 't', encoding: 'GSM-7', partsPerMessage: 1, sendAtMs: T0_MS, skippedCount: 0, readyAtMs: T0_MS };
    expect(await a.stores.campaigns.markReady(ready, 'node-a')).toBe(false);
    expect(await b.stores.campaigns.deletePartialRecipients('c-1', 100, 'node-b')).toBe(1);
    expect(await b.stores.campaigns.appendRecipients('c-1', [{ msisdn: '1', clientReference: null }], T0_MS, 'node-b')).toBe(true);
    expect(await b.stores.campaigns.markReady(ready, 'node-b')).toBe(true);
    expect(await b.stores.campaigns.findCampaign('c-1')).toMatchObject({ state: 'ready', processing_by: null });
  });
});
