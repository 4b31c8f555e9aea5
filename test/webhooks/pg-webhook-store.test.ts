/**
 * The PostgreSQL outbox units the webhook sender uses as a cluster node, on a real
 * server: the fenced results write, the redrive probe claimed by one node at a time, and leases
 * given back at stop.
 */
import { describe, expect, it } from 'vitest';
import { createPgStores, type PgStores } from '../../src/store/postgres/stores.js';
import type { AttemptRecord } from '../../src/store/sqlite/webhook-store.js';
import { usePostgresSuite, type PostgresDatabase } from '../support/postgres-suite.js';

const suite = usePostgresSuite();
const T0_MS = 1_765_100_000_000;
const LEASE_MS = 45_000;
const URL = 'https://hooks.example/dlr';

interface Row { id: number; state: string; attempts: number; next_attempt_at: number; last_error: string | null; dead_url: string | null; leased_by: string | null }

async function seed(stores: PgStores, events: number): Promise<number> {
  const clientId = await stores.auth.insertClient({ name: 'acme', webhookUrl: URL, webhookSecretEnc: null }, T0_MS);
  await stores.webhooks.insertOutboxRows(Array.from({ length: events }, (_, i) => ({ clientId, recipientId: null, body: `{"n":${i}}`, nowMs: T0_MS })));
  return clientId;
}

async function outbox(database: PostgresDatabase): Promise<Row[]> {
  return (await database.pool.query<Row>('SELECT id, state, attempts, next_attempt_at, last_error, dead_url, leased_by FROM webhook_outbox ORDER BY id')).rows;
}

describe('PgWebhookStore for the sender of a cluster node', () => {
  it('writes each kind of result only while the row is leased to the writing node, and reports the refused ids', async () => {
    const database = await suite.open();
    const stores = createPgStores(database.pool);
    await seed(stores, 4);
    const [r1, r2, r3, r4] = await stores.webhooks.claimDueOutboxRows(T0_MS, 10, LEASE_MS, 'node-a');
    const records: AttemptRecord[] = [
      { id: r1!.id, kind: 'delivered', attempts: 1, atMs: T0_MS + 5 },
      { id: r2!.id, kind: 'retry', attempts: 1, nextAttemptAt: T0_MS + 2_000, lastError: 'HTTP_503' },
      { id: r3!.id, kind: 'dead', attempts: 4, atMs: T0_MS + 5, lastError: 'TIMEOUT', reason: 'transient', url: URL },
      { id: r4!.id, kind: 'delivered', attempts: 1, atMs: T0_MS + 5 },
    ];
    // Node B never held them: all refused, nothing changed.
    expect(await stores.webhooks.recordLeasedAttempts(records, 'node-b')).toEqual(records.map((r) => r.id));
    expect((await outbox(database)).map((r) => [r.state, r.attempts, r.leased_by])).toEqual(Array.from({ length: 4 }, () => ['pending', 0, 'node-a']));
    // Node A's fourth lease was reaped and taken by node B since: that one result is refused.
    await database.pool.query('UPDATE webhook_outbox SET leased_by = $1 WHERE id = $2', ['node-b', r4!.id]);
    expect(await stores.webhooks.recordLeasedAttempts(records, 'node-a')).toEqual([r4!.id]);
    expect(await outbox(database)).toEqual([
      { id: r1!.id, state: 'delivered', attempts: 1, next_attempt_at: T0_MS, last_error: null, dead_url: null, leased_by: null },
      { id: r2!.id, state: 'pending', attempts: 1, next_attempt_at: T0_MS + 2_000, last_error: 'HTTP_503', dead_url: null, leased_by: null },
      { id: r3!.id, state: 'dead', attempts: 4, next_attempt_at: T0_MS, last_error: 'TIMEOUT', dead_url: URL, leased_by: null },
      { id: r4!.id, state: 'pending', attempts: 0, next_attempt_at: T0_MS, last_error: null, dead_url: null, leased_by: 'node-b' },
    ]);
  });

  it('lets one of two nodes probing one endpoint at once send the probe; the other finds it out, then none left', async () => {
    const [a, b] = await suite.openNodes(2) as [PostgresDatabase, PostgresDatabase];
    const storesA = createPgStores(a.pool);
    const storesB = createPgStores(b.pool);
    const clientId = await seed(storesA, 2);
    const claimed = await storesA.webhooks.claimDueOutboxRows(T0_MS, 10, LEASE_MS, 'node-a');
    await storesA.webhooks.recordLeasedAttempts(claimed.map((r) => ({ id: r.id, kind: 'dead', attempts: 4, atMs: T0_MS + 1, lastError: 'HTTP_503', reason: 'transient', url: URL })), 'node-a');
    const filter = { clientId, url: URL, cutoffMs: T0_MS };
    const probes = await Promise.all([
      storesA.webhooks.claimProbe(filter, T0_MS + 10, LEASE_MS, 'node-a'),
      storesB.webhooks.claimProbe(filter, T0_MS + 10, LEASE_MS, 'node-b'),
    ]);
    expect(probes.map((p) => p.kind).sort()).toEqual(['claimed', 'in-flight']);
    const probe = probes.find((p) => p.kind === 'claimed');
    if (probe?.kind !== 'claimed') throw new Error('no probe claimed');
    const prober = probes[0]!.kind === 'claimed' ? 'node-a' : 'node-b';
    // The oldest dead letter, leased to the prober, a fresh series due now.
    expect(probe.row).toMatchObject({ id: claimed[0]!.id, attempts: 0, webhookUrl: URL });
    expect((await outbox(a))[0]).toMatchObject({ state: 'pending', attempts: 0, next_attempt_at: T0_MS + 10, leased_by: prober, dead_url: URL });
    // Nobody else can claim the probe row while its lease lasts.
    expect(await storesA.webhooks.claimDueOutboxRows(T0_MS + 20, 10, LEASE_MS, 'node-c')).toEqual([]);
    // The probe answered 2xx: written, marker cleared; the next probe takes the other dead letter.
    expect(await storesA.webhooks.recordLeasedAttempts([{ id: probe.row.id, kind: 'delivered', attempts: 1, atMs: T0_MS + 30 }], prober)).toEqual([]);
    expect((await outbox(a))[0]).toMatchObject({ state: 'delivered', dead_url: null, leased_by: null });
    expect(await storesB.webhooks.claimProbe(filter, T0_MS + 40, LEASE_MS, 'node-b')).toMatchObject({ kind: 'claimed', row: { id: claimed[1]!.id } });
    await storesB.webhooks.recordLeasedAttempts([{ id: claimed[1]!.id, kind: 'delivered', attempts: 1, atMs: T0_MS + 50 }], 'node-b');
    expect(await storesA.webhooks.claimProbe(filter, T0_MS + 60, LEASE_MS, 'node-a')).toEqual({ kind: 'none-left' });
  });

  it('gives back the leases of rows a stopping node will not send, and only its own', async () => {
    const database = await suite.open();
    const stores = createPgStores(database.pool);
    await seed(stores, 3);
    const claimed = await stores.webhooks.claimDueOutboxRows(T0_MS, 2, LEASE_MS, 'node-a');
    const [third] = await stores.webhooks.claimDueOutboxRows(T0_MS, 2, LEASE_MS, 'node-b');
    await stores.webhooks.releaseLeases([...claimed.map((r) => r.id), third!.id], 'node-a');
    expect((await outbox(database)).map((r) => r.leased_by)).toEqual([null, null, 'node-b']);
    // Due again at once for any node, not when the lease would have ended.
    expect((await stores.webhooks.claimDueOutboxRows(T0_MS + 1, 10, LEASE_MS, 'node-c')).map((r) => r.id)).toEqual(claimed.map((r) => r.id));
  });
});
