/**
 * One signed POST per whole inbound message to the client's inbound webhook URL, through the
 * same outbox, retries, dead letters and replay as receipts, checked by a real HTTP receiver that
 * verifies X-Signature over the raw body. Receipt webhooks keep going to the receipt URL.
 */
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { run as clientCommand } from '../../src/cli/commands/client.js';
import { InboundAdmin } from '../../src/inbound/inbound-admin.js';
import { InboundService } from '../../src/inbound/inbound-service.js';
import { requeueDeadLetters } from '../../src/store/sqlite/webhook-store.js';
import type { InboundMessage } from '../../src/transports/transport.js';
import { enqueueDeliveryReceipt, WebhookSender, type WebhookSenderConfig } from '../../src/webhooks/index.js';
import { captureCliOutput } from '../support/cli-output.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { openWebhookFixture, type WebhookFixture } from '../webhooks/fixture.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';

const FAST: WebhookSenderConfig = { timeoutMs: 300, retryDelaysMs: [20, 40, 80], breakerOpenMs: 60_000, breakerFailures: 100, concurrency: 4 };
const WAIT = { timeout: 10_000, interval: 10 };
const NOW_MS = Date.UTC(2025, 10, 23, 9, 30, 15, 250);

let fx: WebhookFixture;
const receivers: WebhookReceiver[] = [];
let sender: WebhookSender | undefined;

beforeEach(async () => {
  fx = await openWebhookFixture();
});
afterEach(async () => {
  await sender?.stop();
  sender = undefined;
  for (const r of receivers.splice(0)) await r.close();
  await fx.close();
});

async function receiver(): Promise<WebhookReceiver> {
  const r = await WebhookReceiver.start({ secret: 's3cret' });
  receivers.push(r);
  return r;
}

function startSender(): WebhookSender {
  sender = new WebhookSender({ store: fx.store, secretBox: fx.secretBox, logger: fx.logger, config: FAST, pollIntervalMs: 20, flushIntervalMs: 1 });
  sender.start();
  return sender;
}

function service(): InboundService {
  return new InboundService({ store: sqliteStorePorts(fx.store).inbound, logger: fx.logger, now: () => NOW_MS, wakeWebhooks: () => sender?.wake() });
}

function part(sequence: number, total: number, text: string): InboundMessage {
  return { from: '+353861234567', to: '50123', text, receivedAt: '', raw: text, concat: { scheme: 'udh8', reference: 1, total, sequence } };
}

async function acmeWithRoute(receiptUrl: string, inboundUrl: string): Promise<number> {
  const clientId = fx.addClient('acme', { url: receiptUrl, secret: 's3cret' });
  await new InboundAdmin(sqliteStorePorts(fx.store).inbound).addRoute('acme', '50123');
  const configPath = `${fx.dir}/config.json`;
  writeFileSync(configPath, JSON.stringify({ database: { path: fx.dbPath } }));
  const set = await captureCliOutput(() => clientCommand(['set-inbound-webhook', '--name', 'acme', '--url', inboundUrl, '--config', configPath]));
  expect(set).toMatchObject({ code: 0, stdout: `client acme: inbound messages go to ${inboundUrl}\n` });
  return clientId;
}

describe('inbound webhook', () => {
  it('posts one signed body per whole message, exactly the five fields, with X-Event-Id; receipts still go to the receipt URL', async () => {
    const receipts = await receiver();
    const inbound = await receiver();
    const clientId = await acmeWithRoute(receipts.url, inbound.url);
    const s = service();
    await s.receive('sim', part(2, 2, 'world'));
    await s.receive('sim', part(1, 2, 'hello '));
    const recipientId = fx.addRecipient(clientId, '353871234567');
    enqueueDeliveryReceipt(fx.store.db, { clientId, recipientId, to: '353871234567', from: 'ACME', status: 'DELIVRD', clientReference: null }, NOW_MS);
    startSender();
    await inbound.waitForCount(1);
    await receipts.waitForCount(1);
    const [request] = inbound.requests;
    const messageId = fx.store.db.prepare('SELECT public_id FROM inbound_messages').pluck().get() as string;
    const expected = `{"MessageId":"${messageId}","From":"353861234567","To":"50123","Text":"hello world","ReceivedAt":"2025-11-23T09:30:15.250Z"}`;
    expect(request?.rawBody.toString('utf8')).toBe(expected);
    expect(request?.signatureOk).toBe(true);
    expect(request?.signature).toBe(`sha256=${createHmac('sha256', 's3cret').update(expected).digest('hex')}`);
    const row = fx.store.db.prepare(`SELECT id, event_id AS eventId, kind, state FROM webhook_outbox WHERE kind = 'inbound'`).get() as { id: number; eventId: string; kind: string; state: string };
    expect(request?.headers['x-event-id']).toBe(row.eventId);
    expect(row.eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(request?.headers['user-agent']).toBe('smsgate (inbound-message webhook)');
    expect(receipts.requests[0]?.rawBody.toString('utf8')).toBe('{"To":"353871234567","From":"ACME","Status":"DELIVRD","ClientReference":null}');
    await vi.waitFor(() => expect(fx.row(row.id).state).toBe('delivered'), WAIT);
    expect(inbound.count).toBe(1);
  });

  it('adds "Incomplete": true to a message made from what arrived', async () => {
    const inbound = await receiver();
    await acmeWithRoute('http://127.0.0.1:9/receipts', inbound.url);
    const s = new InboundService({ store: sqliteStorePorts(fx.store).inbound, logger: fx.logger, now: () => NOW_MS, wakeWebhooks: () => undefined, reassemblyTimeoutMs: 0 });
    await s.receive('sim', part(1, 2, 'half'));
    expect(await s.sweep()).toBe(1);
    startSender();
    await inbound.waitForCount(1);
    const body = JSON.parse(inbound.requests[0]?.rawBody.toString('utf8') ?? '{}') as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['MessageId', 'From', 'To', 'Text', 'ReceivedAt', 'Incomplete']);
    expect(body).toMatchObject({ Text: 'half', Incomplete: true });
  });

  it('retries 5xx, makes a dead letter after the last attempt, and a replay sends the same bytes with the same X-Event-Id', async () => {
    const inbound = await receiver();
    await acmeWithRoute('http://127.0.0.1:9/receipts', inbound.url);
    inbound.script(...Array.from({ length: 4 }, () => ({ kind: 'status', statusCode: 503 }) as const));
    await service().receive('sim', { from: '0861234567', to: '50123', text: 'STOP', receivedAt: '', raw: 'STOP' });
    startSender();
    const id = fx.store.db.prepare(`SELECT id FROM webhook_outbox WHERE kind = 'inbound'`).pluck().get() as number;
    await vi.waitFor(() => expect(fx.row(id).state).toBe('dead'), WAIT);
    expect(fx.row(id)).toMatchObject({ attempts: 4, last_error: 'HTTP_503' });
    expect(requeueDeadLetters(fx.store.db, {}, Date.now())).toEqual([id]);
    sender?.wake();
    await vi.waitFor(() => expect(fx.row(id).state).toBe('delivered'), WAIT);
    expect(inbound.count).toBe(5);
    const bodies = new Set(inbound.requests.map((r) => r.rawBody.toString('utf8')));
    expect(bodies.size).toBe(1);
    const eventId = fx.store.db.prepare('SELECT event_id FROM webhook_outbox WHERE id = ?').pluck().get(id) as string;
    expect(new Set(inbound.requests.map((r) => r.headers['x-event-id']))).toEqual(new Set([eventId]));
  });

  it('queues nothing for a client without an inbound webhook URL, and --clear removes it', async () => {
    await acmeWithRoute('http://127.0.0.1:9/receipts', 'http://127.0.0.1:9/inbound');
    const configPath = `${fx.dir}/config.json`;
    expect((await captureCliOutput(() => clientCommand(['set-inbound-webhook', '--name', 'acme', '--clear', '--config', configPath]))).code).toBe(0);
    await service().receive('sim', { from: '0861234567', to: '50123', text: 'hello', receivedAt: '', raw: 'hello' });
    expect(fx.store.db.prepare(`SELECT COUNT(*) FROM webhook_outbox`).pluck().get()).toBe(0);
    expect(fx.store.db.prepare(`SELECT COUNT(*) FROM inbound_messages WHERE client_id IS NOT NULL`).pluck().get()).toBe(1);
  });

  it('refuses a non-http URL and --url with --clear as usage errors (exit 2)', async () => {
    fx.addClient('acme', { url: null });
    const configPath = `${fx.dir}/config.json`;
    writeFileSync(configPath, JSON.stringify({ database: { path: fx.dbPath } }));
    const ftp = await captureCliOutput(() => clientCommand(['set-inbound-webhook', '--name', 'acme', '--url', 'ftp://x/y', '--config', configPath]));
    expect(ftp.code).toBe(2);
    expect(ftp.stderr).toContain('usage: smsgate client set-inbound-webhook --name NAME (--url URL | --clear)');
    const both = await captureCliOutput(() => clientCommand(['set-inbound-webhook', '--name', 'acme', '--url', 'http://x/', '--clear', '--config', configPath]));
    expect(both.code).toBe(2);
    expect(fx.store.db.prepare(`SELECT inbound_webhook_url FROM clients`).pluck().get()).toBeNull();
  });
});
