/**
 * Batch units of the PostgreSQL store (insertReceipts, insertOutboxRows) on a real server: one
 * statement each, same rows and order as the SQLite statements give.
 */
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { createPgStores, type PgStores } from '../../src/store/postgres/stores.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { T0_MS, seedReadyCampaign } from './conformance/seed.js';

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
  it('inserts receipts in one statement, in order', async () => {
    const stores = await open();
    await stores.dispatch.insertReceipts([receipt('a', 'pending', null), receipt('b', 'pending', null, 'UNDELIV'), receipt('c', 'pending', null), receipt('a', 'pending', null, 'ENROUTE')]);
    await stores.dispatch.insertReceipts([]);
    const a = await stores.dispatch.pendingReceipts('carrier', 'a');
    expect(a.map((r) => [r.status, r.final, r.error_code])).toEqual([['DELIVRD', 1, null], ['ENROUTE', 1, null]]);
    expect((await stores.dispatch.pendingReceipts('carrier', 'b')).map((r) => r.status)).toEqual(['UNDELIV']);
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
