/**
 * A new outbox row wakes every node's sender on PostgreSQL: the insert (insertOutboxRow, as the
 * engine and the inbound store call it inside their unit's transaction) notifies smsgate_outbox,
 * delivered at the commit. Real parts: a PostgreSQL server, two nodes' pools on one database, a
 * LISTEN session (PgWakeups) per the cluster runtime's wiring, a real HTTP receiver. The senders'
 * poll interval is a minute, so only the wake-up can explain a delivery within seconds.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/log.js';
import { inTransaction, type PgPool } from '../../src/store/postgres/pool.js';
import { createPgStores } from '../../src/store/postgres/stores.js';
import { PgWakeups, type WakeChannel } from '../../src/store/postgres/wakeups.js';
import { insertOutboxRow } from '../../src/store/postgres/webhook-store.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { PgWebhookOutbox, WebhookSender } from '../../src/webhooks/index.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const suite = usePostgresSuite();
const box = SecretBox.fromKey(randomBytes(32));
const SECRET = 'whsec-wake';
/** Far longer than any wait below: a sender that delivers sooner was woken. */
const POLL_INTERVAL_MS = 60_000;
/** Well under the poll interval; generous for a loaded 2-core machine. */
const WOKEN_WITHIN_MS = 5_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

async function until(condition: () => boolean, deadlineMs: number, what: string): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() >= deadline) throw new Error(`${what}: not within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Two nodes' pools on one fresh database, and its URL (for LISTEN). */
async function twoNodes(): Promise<{ url: string; first: PgPool; second: PgPool }> {
  const url = await suite.server().createDatabase();
  const pools: PgPool[] = [];
  for (const migrate of [true, false]) {
    const database = await openDatabase({ url, path: 'unused', synchronous: 'FULL', keyFile: 'unused' }, { migrate });
    suite.afterThisTest(() => database.close());
    if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
    pools.push(database.pool);
  }
  return { url, first: pools[0] as PgPool, second: pools[1] as PgPool };
}

async function listen(url: string, onWake: (channel: WakeChannel, payload: string) => void): Promise<void> {
  const wakeups = await PgWakeups.start({ url, channels: ['smsgate_outbox'], onWake });
  suite.afterThisTest(() => wakeups.close());
}

describe('outbox wake-ups on PostgreSQL', () => {
  it("a second node's sender delivers a row the first node inserted within seconds, with a one-minute poll", async () => {
    const { url, first, second } = await twoNodes();
    const receiver = await WebhookReceiver.start({ secret: SECRET });
    cleanups.push(() => receiver.close());
    const clientId = await createPgStores(first).auth.insertClient({ name: 'acme', webhookUrl: receiver.url, webhookSecretEnc: box.seal(SECRET) }, Date.now());

    // The second node: its sender over its own pool, woken by its LISTEN session (as src/cluster wires it).
    const sender = new WebhookSender({
      outbox: new PgWebhookOutbox(createPgStores(second).webhooks, { nodeId: () => 'node-b' }),
      secretBox: box, logger: silentLogger(), pollIntervalMs: POLL_INTERVAL_MS, flushIntervalMs: 5,
    });
    cleanups.push(() => sender.stop());
    await listen(url, () => sender.wake());
    sender.start();
    // Its first look (at start) found nothing; the next poll is a minute away.
    await sender.whenIdle();
    expect(receiver.requests).toHaveLength(0);

    // The first node queues an event in a unit's transaction, as the engine does.
    const insertedAt = Date.now();
    await inTransaction(first, (client) => insertOutboxRow(client, { clientId, recipientId: null, body: '{"n":1}', nowMs: insertedAt }));
    await until(() => receiver.requests.length === 1, WOKEN_WITHIN_MS, 'the second node delivers the first node\'s event');
    const tookMs = Date.now() - insertedAt;
    expect(tookMs).toBeLessThan(WOKEN_WITHIN_MS);
    console.log(`outbox wake-up: the second node delivered ${tookMs} ms after the first node's commit (poll interval ${POLL_INTERVAL_MS} ms)`);
    await until(() => sender.stats().delivered === 1, WOKEN_WITHIN_MS, 'the delivery written');
  });

  it('notifies once per transaction, at its commit, and not for an insert that queued nothing', async () => {
    const { url, first } = await twoNodes();
    const heard: string[] = [];
    await listen(url, (channel, payload) => heard.push(`${channel}:${payload}`));
    /** A notification from another session: delivered after every one committed before it. */
    const marker = async (name: string): Promise<void> => {
      await first.query(`SELECT pg_notify('smsgate_outbox', $1)`, [name]);
      await until(() => heard.includes(`smsgate_outbox:${name}`), WOKEN_WITHIN_MS, `the marker ${name}`);
    };
    const stores = createPgStores(first);
    const subscribed = await stores.auth.insertClient({ name: 'subscribed', webhookUrl: 'http://127.0.0.1:9/hook', webhookSecretEnc: null }, Date.now());
    const noUrl = await stores.auth.insertClient({ name: 'no-url', webhookUrl: null, webhookSecretEnc: null }, Date.now());

    // A client without a URL gets no event, and no wake-up.
    expect(await insertOutboxRow(first, { clientId: noUrl, recipientId: null, body: '{}', nowMs: Date.now() })).toBe(false);
    await marker('after-nothing-queued');
    expect(heard).toEqual(['smsgate_outbox:after-nothing-queued']);
    heard.length = 0;

    // Fifty rows in one transaction, a statement each (the engine queues a receipt's webhook per
    // part change), and a batch insert: nothing heard until the commit, then one notification.
    await inTransaction(first, async (client) => {
      for (let i = 0; i < 50; i++) expect(await insertOutboxRow(client, { clientId: subscribed, recipientId: null, body: `{"n":${i}}`, nowMs: Date.now() })).toBe(true);
      await marker('before-commit');
      expect(heard).toEqual(['smsgate_outbox:before-commit']);
    });
    // One batch insert outside a transaction: its own statement's commit, one more.
    await stores.webhooks.insertOutboxRows([1, 2, 3].map((n) => ({ clientId: subscribed, recipientId: null, body: `{"b":${n}}`, nowMs: Date.now() })));
    await marker('after-both');
    expect(heard).toEqual(['smsgate_outbox:before-commit', 'smsgate_outbox:', 'smsgate_outbox:', 'smsgate_outbox:after-both']);
    expect((await first.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_outbox')).rows[0]?.n).toBe(53);
  });
});
