/**
 * The webhook sender on its worker thread, as the gateway on SQLite runs it: the TypeScript sources
 * (the thread loads them through src/common/typescript-worker.mjs, the path a built gateway runs
 * from dist/), a real SQLite file shared by this thread's connection and the worker's, a real HTTP
 * receiver.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayObserver, WebhookAttemptResult } from '../../src/gateway-observer.js';
import { NOOP_OBSERVER } from '../../src/gateway-observer.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { createGatewayWebhookSender, enqueueDeliveryReceipt, senderPlacement, verifySignature, WebhookSender } from '../../src/webhooks/index.js';
import { WebhookSenderThread } from '../../src/webhooks/sender-thread.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { openWebhookFixture, type WebhookFixture } from './fixture.js';

let fx: WebhookFixture | undefined;
let receiver: WebhookReceiver | undefined;
let thread: WebhookSenderThread | undefined;
afterEach(async () => {
  await thread?.stop();
  await receiver?.close();
  await fx?.close();
  thread = undefined;
  receiver = undefined;
  fx = undefined;
});

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('where the gateway runs its sender', () => {
  it('SQLite: on the worker thread, in process only with an injected clock; PostgreSQL: in process', () => {
    expect(senderPlacement('sqlite', false)).toBe('worker-thread');
    expect(senderPlacement('sqlite', true)).toBe('in-process');
    expect(senderPlacement('postgres', false)).toBe('in-process');
    expect(senderPlacement('postgres', true)).toBe('in-process');
  });
});

describe('webhook sender thread', () => {
  it('sends signed events from its own connection; the results are written, counted and logged by the gateway side', async () => {
    fx = await openWebhookFixture();
    receiver = await WebhookReceiver.start({ secret: 's3cret' });
    receiver.respondWith((r) => (JSON.parse(r.rawBody.toString('utf8')) as { To: string }).To === '353870000002' ? { kind: 'status', statusCode: 400 } : undefined);
    const keyFile = join(fx.dir, 'key');
    const box = SecretBox.fromKeyFile(keyFile);
    const clientId = fx.addClient('acme', { url: receiver.url });
    fx.store.db.prepare('UPDATE clients SET webhook_secret_enc = ? WHERE id = ?').run(box.seal('s3cret'), clientId);
    const now = Date.now();
    for (const msisdn of ['353870000001', '353870000002', '353870000003']) {
      const recipientId = fx.addRecipient(clientId, msisdn);
      enqueueDeliveryReceipt(fx.store.db, { clientId, recipientId, to: msisdn, from: 'Gate', status: 'DELIVRD', clientReference: null }, now);
    }
    const attempts: WebhookAttemptResult[] = [];
    const observer: GatewayObserver = { ...NOOP_OBSERVER, webhookAttempt: (result) => void attempts.push(result) };
    // As the gateway on SQLite builds it: the factory puts it on the thread (no injected clock).
    const built = createGatewayWebhookSender({
      backend: 'sqlite', db: fx.store.db, databasePath: fx.dbPath, keyFile, secretBox: box, logger: fx.logger, config: {}, observer,
    });
    expect(built).toBeInstanceOf(WebhookSenderThread);
    expect(built).not.toBeInstanceOf(WebhookSender);
    thread = built as WebhookSenderThread;
    thread.start();
    await until(() => fx!.outbox().every((r) => r.state !== 'pending'), 'every outbox row written back');
    expect(fx.outbox().map((r) => [r.state, r.attempts])).toEqual([['delivered', 1], ['dead', 1], ['delivered', 1]]);
    expect(receiver.requests.every((r) => verifySignature(r.rawBody, r.headers['x-signature'] as string, 's3cret'))).toBe(true);
    expect(attempts.sort()).toEqual(['dead', 'delivered', 'delivered']);
    // The worker's log line (the dead letter) reaches this side's logger.
    expect(fx.logs.some((l) => l.msg === 'webhook dead letter' && l.lastError === 'HTTP_400')).toBe(true);

    // Rows committed later are sent after a wake.
    const recipientId = fx.addRecipient(clientId, '353870000004');
    enqueueDeliveryReceipt(fx.store.db, { clientId, recipientId, to: '353870000004', from: 'Gate', status: 'UNDELIV', clientReference: null }, Date.now());
    thread.wake();
    await until(() => fx!.outbox().every((r) => r.state !== 'pending'), 'the fourth row written back');
    await thread.stop();
    expect(fx.outbox().map((r) => r.state)).toEqual(['delivered', 'dead', 'delivered', 'delivered']);
  });
});
