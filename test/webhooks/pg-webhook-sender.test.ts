/**
 * The webhook sender on PostgreSQL, on a real server (usePostgresSuite) and a real
 * HTTP receiver. One node: delivered, retried on 5xx, a dead letter after the attempts, the breaker,
 * redrive. Two nodes on one outbox: every event POSTed exactly once; one node's leases reaped while
 * its requests are out: its late results are refused (fencedResults) and the other node delivers,
 * with the same X-Event-Id.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { NodeIdSource } from '../../src/common/node-id.js';
import { silentLogger } from '../../src/common/log.js';
import { requeueExpiredNodes } from '../../src/store/postgres/node-takeover.js';
import { inTransaction } from '../../src/store/postgres/pool.js';
import { createPgStores, type PgStores } from '../../src/store/postgres/stores.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { PgWebhookOutbox, WebhookSender, type WebhookSenderConfig } from '../../src/webhooks/index.js';
import { usePostgresSuite, type PostgresDatabase } from '../support/postgres-suite.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const suite = usePostgresSuite();

const SECRET = 'whsec-pg';
/** Short retries and a breaker that stays shut unless a test asks for it. */
const FAST: WebhookSenderConfig = {
  timeoutMs: 2_000, retryDelaysMs: [20, 40, 80], breakerOpenMs: 60_000, breakerFailures: 100, concurrency: 8, redriveWithinMs: 0,
};
const WAIT = { timeout: 20_000, interval: 20 };

interface OutboxRow {
  id: number; state: string; attempts: number; last_error: string | null; dead_reason: string | null; event_id: string;
  leased_by: string | null; lease_until: number | null; dead_url: string | null;
}

const box = SecretBox.fromKey(randomBytes(32));
const receivers: WebhookReceiver[] = [];
const senders: WebhookSender[] = [];

afterEach(async () => {
  for (const s of senders.splice(0)) await s.stop();
  for (const r of receivers.splice(0)) await r.close();
});

async function receiver(): Promise<WebhookReceiver> {
  const r = await WebhookReceiver.start({ secret: SECRET });
  receivers.push(r);
  return r;
}

function node(id: string): NodeIdSource {
  return { nodeId: () => id };
}

function sender(stores: PgStores, nodeId: NodeIdSource, config: Partial<WebhookSenderConfig> = {}): WebhookSender {
  const s = new WebhookSender({
    outbox: new PgWebhookOutbox(stores.webhooks, nodeId), secretBox: box, logger: silentLogger(), config: { ...FAST, ...config },
    pollIntervalMs: 50, flushIntervalMs: 5,
  });
  senders.push(s);
  return s;
}

/** A client with the receiver's URL and secret, and `count` delivery-receipt events queued for it. */
async function queueEvents(stores: PgStores, url: string, count: number): Promise<number> {
  const clientId = await stores.auth.insertClient({ name: `c-${url}`, webhookUrl: url, webhookSecretEnc: box.seal(SECRET) }, Date.now());
  await stores.webhooks.insertOutboxRows(Array.from({ length: count }, (_, i) => ({ clientId, recipientId: null, body: `{"n":${i}}`, nowMs: Date.now() })));
  return clientId;
}

async function outbox(database: PostgresDatabase): Promise<OutboxRow[]> {
  return (await database.pool.query<OutboxRow>(
    `SELECT id, state, attempts, last_error, dead_reason, event_id, leased_by, lease_until, dead_url FROM webhook_outbox ORDER BY id`)).rows;
}

function eventIdsSeen(r: WebhookReceiver): string[] {
  return r.requests.map((q) => String(q.headers['x-event-id']));
}

describe('WebhookSender on PostgreSQL, one node', () => {
  it('delivers each event once, signed, with its stored event id, and leaves no lease behind', async () => {
    const database = await suite.open();
    const stores = createPgStores(database.pool);
    const r = await receiver();
    await queueEvents(stores, r.url, 40);
    const s = sender(stores, node('node-a'));
    s.start();
    await vi.waitFor(async () => expect((await outbox(database)).every((row) => row.state === 'delivered')).toBe(true), WAIT);
    const rows = await outbox(database);
    expect(rows).toHaveLength(40);
    for (const row of rows) expect(row).toMatchObject({ attempts: 1, leased_by: null, lease_until: null });
    expect(r.count).toBe(40);
    expect(r.signatureFailures).toBe(0);
    expect(eventIdsSeen(r).sort()).toEqual(rows.map((row) => row.event_id).sort());
    expect(s.stats()).toMatchObject({ requests: 40, delivered: 40, fencedResults: 0 });
  });

  it('retries a 5xx with the same event id and delivers on the third attempt', async () => {
    const database = await suite.open();
    const stores = createPgStores(database.pool);
    const r = await receiver();
    r.script({ kind: 'status', statusCode: 503 }, { kind: 'status', statusCode: 502 });
    await queueEvents(stores, r.url, 1);
    const s = sender(stores, node('node-a'));
    s.start();
    await vi.waitFor(async () => expect((await outbox(database))[0]?.state).toBe('delivered'), WAIT);
    const [row] = await outbox(database);
    expect(row).toMatchObject({ attempts: 3, last_error: 'HTTP_502', leased_by: null });
    expect(r.count).toBe(3);
    expect(new Set(eventIdsSeen(r))).toEqual(new Set([row?.event_id]));
    // SPEC "Events" point 6: each retry waits its delay after the failure before it (20 and 40 ms here).
    const [first, second, third] = r.requests;
    expect(second!.monotonicMs - first!.monotonicMs).toBeGreaterThanOrEqual(20);
    expect(third!.monotonicMs - second!.monotonicMs).toBeGreaterThanOrEqual(40);
    expect(s.stats()).toMatchObject({ retriesScheduled: 2, delivered: 1 });
  });

  it('makes a dead letter of an event still failing after 1 + 3 attempts', async () => {
    const database = await suite.open();
    const stores = createPgStores(database.pool);
    const r = await receiver();
    r.respondWith(() => ({ kind: 'status', statusCode: 500 }));
    await queueEvents(stores, r.url, 1);
    const s = sender(stores, node('node-a'));
    s.start();
    await vi.waitFor(async () => expect((await outbox(database))[0]?.state).toBe('dead'), WAIT);
    expect((await outbox(database))[0]).toMatchObject({ attempts: 4, last_error: 'HTTP_500', dead_reason: 'transient', leased_by: null, dead_url: r.url });
    expect(r.count).toBe(4);
    expect(await stores.webhooks.listDeadLetters()).toHaveLength(1);
  });

  it('opens the breaker after two transient failures: the other events fail fast with no request', async () => {
    const database = await suite.open();
    const stores = createPgStores(database.pool);
    const r = await receiver();
    r.respondWith(() => ({ kind: 'status', statusCode: 503 }));
    const clientId = await queueEvents(stores, r.url, 6);
    const s = sender(stores, node('node-a'), { breakerFailures: 2, concurrency: 1, retryDelaysMs: [] });
    s.start();
    await vi.waitFor(async () => expect((await outbox(database)).every((row) => row.state === 'dead')).toBe(true), WAIT);
    expect(r.count).toBe(2);
    const rows = await outbox(database);
    expect(rows.filter((row) => row.last_error === 'CIRCUIT_OPEN')).toHaveLength(4);
    expect(s.stats().circuitOpenFastFails).toBe(4);
    expect(s.breakerState(clientId, r.url)).toBe('open');
  });

  it('redrives the dead letters of an endpoint that answers again: a probe, then the rest, each delivered once more', async () => {
    const database = await suite.open();
    const stores = createPgStores(database.pool);
    const r = await receiver();
    // Down for the five events' first attempts (the only requests before a dead letter exists to
    // probe with), back for what follows: a probe cannot race the endpoint's return.
    const failed = 5;
    r.respondWith((request) => (request.seq < failed ? { kind: 'status', statusCode: 503 } : undefined));
    await queueEvents(stores, r.url, 5);
    const s = sender(stores, node('node-a'), { retryDelaysMs: [], breakerOpenMs: 300, redriveWithinMs: 3_600_000 });
    s.start();
    await vi.waitFor(async () => expect((await outbox(database)).every((row) => row.state === 'delivered')).toBe(true), WAIT);
    const rows = await outbox(database);
    // After the outage every event was POSTed once more, and acknowledged.
    const after = eventIdsSeen(r).slice(failed);
    expect(after.sort()).toEqual(rows.map((row) => row.event_id).sort());
    expect(s.stats()).toMatchObject({ probes: 1, redriven: 4 });
    for (const row of rows) expect(row).toMatchObject({ leased_by: null, dead_url: null });
  });

  it('gives back at stop the leases of events it claimed and did not send; the one still out keeps its lease', async () => {
    const database = await suite.open();
    const stores = createPgStores(database.pool);
    const r = await receiver();
    r.respondWith(() => ({ kind: 'hang' }));
    await queueEvents(stores, r.url, 4);
    const s = new WebhookSender({
      outbox: new PgWebhookOutbox(stores.webhooks, node('node-a')), secretBox: box, logger: silentLogger(),
      config: { ...FAST, concurrency: 1, timeoutMs: 60_000 }, pollIntervalMs: 50, flushIntervalMs: 5, stopTimeoutMs: 100,
    });
    senders.push(s);
    s.start();
    await r.waitForCount(1);
    // Concurrency 1 claims 4 rounds: all four are node A's, one at the receiver.
    expect((await outbox(database)).map((row) => row.leased_by)).toEqual(['node-a', 'node-a', 'node-a', 'node-a']);
    await s.stop();
    const rows = await outbox(database);
    expect(rows.map((row) => row.state)).toEqual(['pending', 'pending', 'pending', 'pending']);
    expect(rows.filter((row) => row.leased_by === 'node-a')).toHaveLength(1);
    expect(rows.filter((row) => row.leased_by === null)).toHaveLength(3);
  });
});

describe('WebhookSender on PostgreSQL, two nodes on one outbox', () => {
  it('POSTs each of 400 events exactly once between two senders with two node ids', async () => {
    const [a, b] = await suite.openNodes(2) as [PostgresDatabase, PostgresDatabase];
    const storesA = createPgStores(a.pool);
    const storesB = createPgStores(b.pool);
    const r = await receiver();
    await queueEvents(storesA, r.url, 400);
    const senderA = sender(storesA, node('node-a'));
    const senderB = sender(storesB, node('node-b'));
    senderA.start();
    senderB.start();
    await vi.waitFor(async () => expect((await outbox(a)).every((row) => row.state === 'delivered')).toBe(true), WAIT);
    const rows = await outbox(a);
    expect(r.count).toBe(400);
    expect(new Set(eventIdsSeen(r)).size).toBe(400);
    expect(eventIdsSeen(r).sort()).toEqual(rows.map((row) => row.event_id).sort());
    expect(senderA.stats().delivered + senderB.stats().delivered).toBe(400);
    expect(senderA.stats().fencedResults + senderB.stats().fencedResults).toBe(0);
  });

  it('refuses the late results of a node whose leases were reaped; the other node delivers the same events', async () => {
    const [a, b] = await suite.openNodes(2) as [PostgresDatabase, PostgresDatabase];
    const storesA = createPgStores(a.pool);
    const storesB = createPgStores(b.pool);
    const r = await receiver();
    // Node A's requests are answered late (it stalls while they are out); later requests at once.
    r.script(...Array.from({ length: 5 }, () => ({ kind: 'status' as const, statusCode: 200, delayMs: 1_500 })));
    await queueEvents(storesA, r.url, 5);
    const senderA = sender(storesA, node('node-a'));
    senderA.start();
    await r.waitForCount(5);
    expect((await outbox(a)).every((row) => row.leased_by === 'node-a')).toBe(true);
    // Node A expired: a live node's reap takes its leases over (src/store/postgres/node-takeover.ts).
    expect(await inTransaction(b.pool, (client) => requeueExpiredNodes(client, ['node-a']))).toBe(5);
    const senderB = sender(storesB, node('node-b'));
    senderB.start();
    await vi.waitFor(() => expect(senderA.stats().fencedResults).toBe(5), WAIT);
    await vi.waitFor(async () => expect((await outbox(a)).every((row) => row.state === 'delivered')).toBe(true), WAIT);
    expect(senderB.stats()).toMatchObject({ delivered: 5, fencedResults: 0 });
    const rows = await outbox(a);
    for (const row of rows) expect(row).toMatchObject({ attempts: 1, leased_by: null });
    // Each event twice, A's and B's, under one X-Event-Id: the receiver de-duplicates (SPEC "Events" point 8).
    expect(r.count).toBe(10);
    const seen = eventIdsSeen(r);
    for (const row of rows) expect(seen.filter((id) => id === row.event_id)).toHaveLength(2);
  });

  it('sends a dead letter replayed by the operator from the node that is running, with its event id', async () => {
    const [a, b] = await suite.openNodes(2) as [PostgresDatabase, PostgresDatabase];
    const storesA = createPgStores(a.pool);
    const storesB = createPgStores(b.pool);
    const r = await receiver();
    r.respondWith(() => ({ kind: 'status', statusCode: 410 }));
    const clientId = await queueEvents(storesA, r.url, 1);
    const senderA = sender(storesA, node('node-a'));
    senderA.start();
    await vi.waitFor(async () => expect((await outbox(a))[0]?.state).toBe('dead'), WAIT);
    await senderA.stop();
    // `smsgate webhook replay --client acme` on PostgreSQL: re-queued; node B, running, sends it.
    r.respondWith(undefined);
    const senderB = sender(storesB, node('node-b'));
    senderB.start();
    expect(await storesB.webhooks.requeueDeadLetters({ clientId }, Date.now())).toHaveLength(1);
    await vi.waitFor(async () => expect((await outbox(a))[0]).toMatchObject({ state: 'delivered', attempts: 1, leased_by: null }), WAIT);
    const [row] = await outbox(a);
    expect(eventIdsSeen(r)).toEqual([row!.event_id, row!.event_id]);
    expect(senderB.stats().delivered).toBe(1);
  });

  it('redrives an endpoint two nodes track once: each dead letter is POSTed once after the outage', async () => {
    const [a, b] = await suite.openNodes(2) as [PostgresDatabase, PostgresDatabase];
    const storesA = createPgStores(a.pool);
    const storesB = createPgStores(b.pool);
    const r = await receiver();
    let down = true;
    r.respondWith(() => (down ? { kind: 'status', statusCode: 503 } : undefined));
    await queueEvents(storesA, r.url, 30);
    const redrive = { retryDelaysMs: [], breakerOpenMs: 300, redriveWithinMs: 3_600_000 };
    const senderA = sender(storesA, node('node-a'), redrive);
    senderA.start();
    await vi.waitFor(async () => expect((await outbox(a)).every((row) => row.state === 'dead')).toBe(true), WAIT);
    // Node B starts during the outage: it finds the endpoint's dead letters and tracks it too, so
    // both nodes probe it, a window (300 ms) apart each.
    const senderB = sender(storesB, node('node-b'), redrive);
    senderB.start();
    await vi.waitFor(() => expect(senderB.stats().probes).toBeGreaterThan(0), WAIT);
    await vi.waitFor(() => expect(senderA.stats().probes).toBeGreaterThan(0), WAIT);
    const failed = r.count;
    down = false;
    await vi.waitFor(async () => expect((await outbox(a)).every((row) => row.state === 'delivered')).toBe(true), WAIT);
    const rows = await outbox(a);
    // Every request after the outage was answered 2xx: each event once, never a second redrive or probe.
    const after = eventIdsSeen(r).slice(failed);
    expect(after.sort()).toEqual(rows.map((row) => row.event_id).sort());
  });
});
