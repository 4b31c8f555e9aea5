/**
 * PostgreSQL's own HA is the operator's; the nodes carry on through it. A database
 * that drops every connection, as a failover does. The sender's link to a real PostgreSQL runs
 * through a proxy the test cuts right after the receiver got the event: the sender keeps the result
 * (the event is not sent again), logs the outage once, keeps trying, and writes the result when the
 * link is back. The process does not crash on the dropped pool connections.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/common/log.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { createPgStores } from '../../src/store/postgres/stores.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { PgWebhookOutbox, WebhookSender } from '../../src/webhooks/index.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { TcpRelay } from '../support/tcp-relay.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const suite = usePostgresSuite();
const SECRET = 'whsec-failover';
const WAIT = { timeout: 20_000, interval: 20 };

interface Line { level: number; msg: string; [field: string]: unknown }

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('WebhookSender on PostgreSQL through a failover', () => {
  it('keeps a result while the database is unreachable, logs the outage once, and writes it when the database is back', async () => {
    const server = suite.server();
    const url = await server.createDatabase();
    const direct = await openDatabase({ url, path: 'unused', synchronous: 'FULL', keyFile: 'unused' });
    cleanups.push(() => direct.close());
    if (direct.kind !== 'postgres') throw new Error('expected PostgreSQL');
    const proxy = await TcpRelay.start(server.host, server.port);
    cleanups.push(() => proxy.close());
    const viaProxy = await openDatabase({ url: url.replace(`:${server.port}/`, `:${proxy.port}/`), path: 'unused', synchronous: 'FULL', keyFile: 'unused' },
      { migrate: false });
    cleanups.push(async () => {
      proxy.restore();
      await viaProxy.close();
    });
    if (viaProxy.kind !== 'postgres') throw new Error('expected PostgreSQL');

    const receiver = await WebhookReceiver.start({ secret: SECRET });
    cleanups.push(() => receiver.close());
    // The failover happens while the event is at the receiver: the sender has its answer, not yet written.
    receiver.respondWith(() => {
      proxy.cut();
      return undefined;
    });
    const box = SecretBox.fromKey(randomBytes(32));
    const directStores = createPgStores(direct.pool);
    const clientId = await directStores.auth.insertClient({ name: 'acme', webhookUrl: receiver.url, webhookSecretEnc: box.seal(SECRET) }, Date.now());
    await directStores.webhooks.insertOutboxRows([{ clientId, recipientId: null, body: '{"n":1}', nowMs: Date.now() }]);

    const lines: Line[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Line);
        callback();
      },
    });
    const sender = new WebhookSender({
      outbox: new PgWebhookOutbox(createPgStores(viaProxy.pool).webhooks, { nodeId: () => 'node-a' }), secretBox: box,
      logger: createLogger({ level: 'info', destination }), config: { timeoutMs: 2_000, retryDelaysMs: [50], concurrency: 4 },
      pollIntervalMs: 50, flushIntervalMs: 5,
    });
    cleanups.push(() => sender.stop());
    sender.start();

    await receiver.waitForCount(1);
    // Several tries to reconnect (the results write every second, claims at every poll) while cut.
    await vi.waitFor(() => expect(proxy.refusedConnections).toBeGreaterThanOrEqual(10), WAIT);
    const outage = () => lines.filter((l) => l.msg.startsWith('webhook outbox unreachable'));
    expect(outage()).toHaveLength(1);
    expect(outage()[0]).toMatchObject({ level: 50 });
    const [row] = (await direct.pool.query<{ state: string; leased_by: string | null }>('SELECT state, leased_by FROM webhook_outbox')).rows;
    expect(row).toEqual({ state: 'pending', leased_by: 'node-a' });

    proxy.restore();
    await vi.waitFor(async () => {
      const [after] = (await direct.pool.query<{ state: string; attempts: number; leased_by: string | null }>('SELECT state, attempts, leased_by FROM webhook_outbox')).rows;
      expect(after).toEqual({ state: 'delivered', attempts: 1, leased_by: null });
    }, WAIT);
    // The kept result was written: the event was not sent again.
    expect(receiver.count).toBe(1);
    expect(sender.stats()).toMatchObject({ delivered: 1, fencedResults: 0 });
    await vi.waitFor(() => expect(lines.some((l) => l.msg === 'webhook outbox reachable again')).toBe(true), WAIT);
    expect(outage()).toHaveLength(1);
  });
});
