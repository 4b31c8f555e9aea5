/**
 * Connections and syscalls a webhook: the sender's requests reuse kept-alive connections (at most
 * `concurrency` of them for any number of webhooks), each request is one socket write (head and
 * body together), and with pipelining the requests of one turn share a write. A real WebhookSender
 * over a real SQLite outbox, a real node:http receiver on loopback; writes counted where net.Socket
 * hands bytes to its handle.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createNodeHttpClient, enqueueDeliveryReceipt, WebhookSender, type WebhookHttpClient, type WebhookSenderConfig,
} from '../../src/webhooks/index.js';
import { createUndiciHttpClient } from '../../src/webhooks/undici-http-client.js';
import { pollUntil } from '../support/poll-until.js';
import { countSocketWrites, type SocketWriteCounter } from '../support/socket-writes.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { openWebhookFixture, type WebhookFixture } from './fixture.js';

const WEBHOOKS = 50;
const CONCURRENCY = 4;
const CONFIG: WebhookSenderConfig = {
  timeoutMs: 5_000, retryDelaysMs: [20, 40, 80], breakerOpenMs: 60_000, breakerFailures: 100, concurrency: CONCURRENCY, redriveWithinMs: 0,
};

let fx: WebhookFixture;
let receiver: WebhookReceiver | undefined;
let counter: SocketWriteCounter | undefined;
const senders: WebhookSender[] = [];
const clients: WebhookHttpClient[] = [];

beforeEach(async () => {
  fx = await openWebhookFixture();
});

afterEach(async () => {
  counter?.restore();
  counter = undefined;
  for (const sender of senders.splice(0)) await sender.stop();
  for (const client of clients.splice(0)) client.close();
  await receiver?.close();
  receiver = undefined;
  await fx.close();
});

describe('webhook requests on kept-alive connections', () => {
  it.each([
    ['undici (the default)', (): WebhookHttpClient | undefined => undefined],
    ['node:http', (): WebhookHttpClient | undefined => createNodeHttpClient({ maxSockets: CONCURRENCY })],
  ])(`%s: ${WEBHOOKS} webhooks use at most concurrency (${CONCURRENCY}) connections and one write each`, async (_name, makeClient) => {
    const target = await WebhookReceiver.start({ secret: 'whsec' });
    receiver = target;
    const clientId = fx.addClient('acme', { url: target.url, secret: 'whsec' });
    for (let i = 0; i < WEBHOOKS; i++) {
      const msisdn = `35387${String(i).padStart(7, '0')}`;
      const recipientId = fx.addRecipient(clientId, msisdn);
      expect(enqueueDeliveryReceipt(fx.store.db, { clientId, recipientId, to: msisdn, from: 'Gate', status: 'DELIVRD', clientReference: null }, Date.now())).toBe(true);
    }
    counter = countSocketWrites((socket) => socket.remotePort === target.port);
    const httpClient = makeClient();
    if (httpClient !== undefined) clients.push(httpClient);
    const sender = new WebhookSender({
      store: fx.store, secretBox: fx.secretBox, logger: fx.logger, config: CONFIG, pollIntervalMs: 20, flushIntervalMs: 1,
      ...(httpClient === undefined ? {} : { httpClient }),
    });
    senders.push(sender);
    sender.start();
    const delivered = (): number => Number(fx.store.db.prepare(`SELECT COUNT(*) FROM webhook_outbox WHERE state = 'delivered'`).pluck().get());
    await pollUntil(() => delivered() === WEBHOOKS, 10_000, () => `${WEBHOOKS} webhooks delivered (${delivered()} so far)`);
    expect(target.count).toBe(WEBHOOKS);
    expect(target.signatureFailures).toBe(0);
    expect(target.connections).toBeGreaterThan(0);
    expect(target.connections).toBeLessThanOrEqual(CONCURRENCY);
    expect(counter.tally.writes).toBe(WEBHOOKS);
  });

  it(`pipelining 8: ${WEBHOOKS} requests over one connection, the requests of a turn in one write, each answer matched to its request`, async () => {
    // The status says which request it answers, so an answer given to the wrong request shows.
    const target = (await WebhookReceiver.start()).respondWith((request) => ({ kind: 'status', statusCode: 200 + (Number(request.rawBody.toString('utf8')) % 5) }));
    receiver = target;
    counter = countSocketWrites((socket) => socket.remotePort === target.port);
    const client = createUndiciHttpClient({ maxSockets: 8, timeoutMs: 5_000, pipelining: 8 });
    clients.push(client);
    const answers = await Promise.all(Array.from({ length: WEBHOOKS }, (_, i) =>
      client.post({ url: target.url, headers: { 'Content-Type': 'text/plain' }, body: String(i), timeoutMs: 5_000 })));
    expect(answers).toEqual(Array.from({ length: WEBHOOKS }, (_, i) => ({ kind: 'response', statusCode: 200 + (i % 5) })));
    expect(target.count).toBe(WEBHOOKS);
    expect(target.connections).toBe(1);
    // One write a request without the cork; the first eight alone share one.
    expect(counter.tally.writes).toBeLessThanOrEqual(WEBHOOKS - 7);
  });
});
