/**
 * The batch units perf's engine uses on SQLite (pendingReceiptsOf,
 * receiptTargets, insertReceipts, insertOutboxRows) on a real PostgreSQL: one statement each, same
 * rows and order as the SQLite statements give.
 */
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { createPgStores, type PgStores } from '../../src/store/postgres/stores.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { T0_MS, dispatchAll, seedReadyCampaign } from './conformance/seed.js';

const suite = usePostgresSuite();

async function open(): Promise<PgStores> {
  const database = await openDatabase({ url: await suite.server().createDatabase(), path: 'unused', synchronous: 'FULL', keyFile: 'unused' });
  suite.afterThisTest(() => database.close());
  if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
  return createPgStores(database.pool);
}

const receipt = (messageId: string, matchState: 'pending' | 'matched', partId: number | null, status = 'DELIVRD') => ({
  transport: 'carrier', messageId, status, final: true, errorCode: null, doneAt: null, raw: `id:${messageId}`, receivedAt: T0_MS, matchState, partId,
});

describe('batch units on PostgreSQL', () => {
  it('finds each message id\'s newest part with its recipient context, in the ids\' order', async () => {
    const stores = await open();
    const seeded = await seedReadyCampaign(stores, { recipients: 3 });
    await dispatchAll(stores, seeded, 'carrier');
    const parts = await stores.dispatch.claimParts('carrier', seeded.campaignId, T0_MS, 3);
    for (const [i, part] of parts.entries()) await stores.dispatch.markSubmitted(part.id, `m-${i}`, T0_MS);
    const targets = await stores.dispatch.receiptTargets('carrier', ['m-2', 'nope', 'm-0']);
    expect(targets).toEqual([
      { message_id: 'm-2', id: parts[2]?.id, recipient_id: parts[2]?.recipient_id, state: 'submitted', part_number: 1, parts_total: 1, part_last_status: null,
        final_at: null, recipient_status: 'pending', recipient_last_status: null, msisdn: '353870000002', client_reference: null, client_id: seeded.clientId,
        sender: 'ACME', webhook_url: 'https://hooks.example/dlr' },
      expect.objectContaining({ message_id: 'm-0', id: parts[0]?.id, msisdn: '353870000000' }),
    ]);
    expect(await stores.dispatch.receiptTargets('carrier', [])).toEqual([]);
    expect(await stores.dispatch.receiptTargets('other', ['m-0'])).toEqual([]);
  });

  it('inserts receipts in one statement and lists the pending ones of several ids, oldest first', async () => {
    const stores = await open();
    await stores.dispatch.insertReceipts([receipt('a', 'pending', null), receipt('b', 'pending', null, 'UNDELIV'), receipt('c', 'pending', null), receipt('a', 'pending', null, 'ENROUTE')]);
    await stores.dispatch.insertReceipts([]);
    const pending = await stores.dispatch.pendingReceiptsOf('carrier', ['a', 'b']);
    expect(pending.map((r) => [r.message_id, r.status, r.final, r.error_code])).toEqual([['a', 'DELIVRD', 1, null], ['b', 'UNDELIV', 1, null], ['a', 'ENROUTE', 1, null]]);
    expect(pending.map((r) => r.id)).toEqual([...pending.map((r) => r.id)].sort((x, y) => x - y));
    expect(await stores.dispatch.pendingReceiptsOf('carrier', [])).toEqual([]);
  });

  it('queues a batch of receipt webhooks in one statement, each with its own event id', async () => {
    const stores = await open();
    const seeded = await seedReadyCampaign(stores, { recipients: 2 });
    await stores.webhooks.insertOutboxRows(seeded.recipientIds.map((recipientId, i) => ({ clientId: seeded.clientId, recipientId, body: `{"n":${i}}`, nowMs: T0_MS + i })));
    const due = await stores.webhooks.selectDueOutboxRows(T0_MS + 5, 10);
    expect(due.map((d) => [d.kind, d.recipientId, d.body, d.createdAt, d.attempts])).toEqual([
      ['receipt', seeded.recipientIds[0], '{"n":0}', T0_MS, 0], ['receipt', seeded.recipientIds[1], '{"n":1}', T0_MS + 1, 0],
    ]);
    expect(new Set(due.map((d) => d.eventId)).size).toBe(2);
  });
});
