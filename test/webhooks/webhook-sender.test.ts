import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { requeueDeadLetters } from '../../src/store/sqlite/webhook-store.js';
import {
  createNodeHttpClient, enqueueDeliveryReceipt, WebhookSender, type WebhookHttpClient, type WebhookSenderConfig,
} from '../../src/webhooks/index.js';
import { ManualClock } from '../support/manual-clock.js';
import { WebhookReceiver, type ScriptedResponse } from '../support/webhook-receiver.js';
import { openWebhookFixture, type WebhookFixture } from './fixture.js';

const FAST: WebhookSenderConfig = { timeoutMs: 300, retryDelaysMs: [20, 40, 80], breakerOpenMs: 60_000, breakerFailures: 100, concurrency: 4 };
const WAIT = { timeout: 10_000, interval: 10 };

describe('WebhookSender against a real receiver', () => {
  let fx: WebhookFixture;
  const receivers: WebhookReceiver[] = [];
  const senders: WebhookSender[] = [];
  beforeEach(async () => {
    fx = await openWebhookFixture();
  });
  afterEach(async () => {
    for (const s of senders.splice(0)) await s.stop();
    for (const r of receivers.splice(0)) await r.close();
    await fx.close();
  });

  const receiver = async (secret: string | null = 'whsec') => {
    const r = await WebhookReceiver.start({ secret });
    receivers.push(r);
    return r;
  };
  const sender = (config: Partial<WebhookSenderConfig> = {}, extra: { httpClient?: WebhookHttpClient; pollIntervalMs?: number } = {}) => {
    const s = new WebhookSender({
      store: fx.store, secretBox: fx.secretBox, logger: fx.logger, config: { ...FAST, ...config },
      pollIntervalMs: extra.pollIntervalMs ?? 20, flushIntervalMs: 1, ...(extra.httpClient ? { httpClient: extra.httpClient } : {}),
    });
    senders.push(s);
    return s;
  };
  /** Queues one receipt for a new recipient of the client; returns the outbox row id. */
  const queue = (clientId: number, msisdn: string, status = 'DELIVRD', clientReference: string | null = null): number => {
    const recipientId = fx.addRecipient(clientId, msisdn, clientReference);
    expect(enqueueDeliveryReceipt(fx.store.db, { clientId, recipientId, to: msisdn, from: 'Gate', status, clientReference }, Date.now())).toBe(true);
    return Number(fx.store.db.prepare('SELECT MAX(id) FROM webhook_outbox').pluck().get());
  };
  const settled = (id: number) => vi.waitFor(() => expect(fx.row(id).state).not.toBe('pending'), WAIT);

  it('posts the stored bytes with Content-Type, User-Agent and X-Signature over the raw body; 2xx marks it delivered', async () => {
    const r = await receiver('whsec');
    const clientId = fx.addClient('acme', { url: r.url, secret: 'whsec' });
    const id = queue(clientId, '353871234567', 'DELIVRD', 'order-7');
    sender().start();
    await settled(id);
    expect(fx.row(id)).toMatchObject({ state: 'delivered', attempts: 1, last_error: null });
    expect(fx.row(id).delivered_at).toBeGreaterThan(0);
    expect(r.count).toBe(1);
    const [req] = r.requests;
    const expectedBody = '{"To":"353871234567","From":"Gate","Status":"DELIVRD","ClientReference":"order-7"}';
    expect(req?.rawBody.toString('utf8')).toBe(expectedBody);
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe('/webhook');
    expect(req?.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(req?.headers['user-agent']).toMatch(/smsgate/);
    const independent = 'sha256=' + createHmac('sha256', 'whsec').update(Buffer.from(expectedBody, 'utf8')).digest('hex');
    expect(req?.headers['x-signature']).toBe(independent);
    expect(req?.signatureOk).toBe(true);
  });

  it('omits X-Signature when the client has no secret', async () => {
    const r = await receiver(null);
    const clientId = fx.addClient('nosecret', { url: r.url });
    const id = queue(clientId, '447700900123');
    sender().start();
    await settled(id);
    expect(fx.row(id).state).toBe('delivered');
    expect(r.requests[0]?.headers).not.toHaveProperty('x-signature');
    expect(r.requests[0]?.rawBody.toString()).toBe('{"To":"447700900123","From":"Gate","Status":"DELIVRD","ClientReference":null}');
  });

  it('a receiver with another secret answers 401, which is not retried', async () => {
    const r = await receiver('receiver-secret');
    const clientId = fx.addClient('mismatch', { url: r.url, secret: 'gateway-secret' });
    const id = queue(clientId, '353870000001');
    sender().start();
    await settled(id);
    expect(fx.row(id)).toMatchObject({ state: 'dead', attempts: 1, last_error: 'HTTP_401' });
    expect(r.signatureFailures).toBe(1);
  });

  const transient: [string, ScriptedResponse, RegExp][] = [
    ['500', { kind: 'status', statusCode: 500 }, /^HTTP_500$/],
    ['503', { kind: 'status', statusCode: 503 }, /^HTTP_503$/],
    ['404', { kind: 'status', statusCode: 404 }, /^HTTP_404$/],
    ['408', { kind: 'status', statusCode: 408 }, /^HTTP_408$/],
    ['a timeout', { kind: 'hang' }, /^TIMEOUT$/],
    ['a reply slower than the timeout', { kind: 'status', statusCode: 200, delayMs: 1_000 }, /^TIMEOUT$/],
    ['a connection reset', { kind: 'reset' }, /^(ECONNRESET|EPIPE)$/],
  ];
  it.each(transient)('retries after %s with the same bytes and signature, and delivers when the receiver recovers', async (_name, failure, code) => {
    const r = await receiver('whsec');
    r.script(failure);
    const clientId = fx.addClient('flaky', { url: r.url, secret: 'whsec' });
    const id = queue(clientId, '353871111111');
    const s = sender();
    s.start();
    await vi.waitFor(() => expect(fx.row(id).attempts).toBe(1), WAIT);
    expect(fx.row(id).last_error).toMatch(code);
    await settled(id);
    expect(fx.row(id)).toMatchObject({ state: 'delivered', attempts: 2 });
    expect(r.count).toBe(2);
    expect(r.requests[1]?.rawBody.equals(r.requests[0]?.rawBody ?? Buffer.alloc(0))).toBe(true);
    expect(r.requests[1]?.headers['x-signature']).toBe(r.requests[0]?.headers['x-signature']);
    // The event's id, the row's UUID, on both attempts.
    expect(r.requests[0]?.headers['x-event-id']).toBe(fx.row(id).event_id);
    expect(r.requests[1]?.headers['x-event-id']).toBe(fx.row(id).event_id);
  });

  it('gives an event inserted without an event id one before its first request, and keeps it for its retries', async () => {
    const r = await receiver('whsec');
    r.script({ kind: 'status', statusCode: 503 });
    const clientId = fx.addClient('no-id', { url: r.url, secret: 'whsec' });
    const id = queue(clientId, '353871212121');
    // As an insert path that does not name the column would leave it.
    fx.store.db.prepare('UPDATE webhook_outbox SET event_id = NULL WHERE id = ?').run(id);
    sender().start();
    await settled(id);
    expect(fx.row(id)).toMatchObject({ state: 'delivered', attempts: 2 });
    expect(fx.row(id).event_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(r.requests.map((q) => q.headers['x-event-id'])).toEqual([fx.row(id).event_id, fx.row(id).event_id]);
  });

  it.each([400, 401, 403, 410, 422, 429, 301, 302])('does not retry %i: one request, then a dead letter naming the status', async (statusCode) => {
    const r = await receiver('whsec');
    r.script({ kind: 'status', statusCode });
    const clientId = fx.addClient('refusing', { url: r.url, secret: 'whsec' });
    const id = queue(clientId, '353872222222');
    sender().start();
    await settled(id);
    expect(fx.row(id)).toMatchObject({ state: 'dead', attempts: 1, last_error: `HTTP_${statusCode}` });
    expect(fx.row(id).dead_at).toBeGreaterThan(0);
    expect(r.count).toBe(1);
  });

  it('gives up after three retries: four requests at growing gaps, then a dead letter and a warn log', async () => {
    const r = await receiver('whsec');
    r.respondWith(() => ({ kind: 'status', statusCode: 500 }));
    const clientId = fx.addClient('down', { url: r.url, secret: 'whsec' });
    const id = queue(clientId, '353873333333');
    const delays = [50, 200, 800];
    sender({ retryDelaysMs: delays }).start();
    await settled(id);
    expect(fx.row(id)).toMatchObject({ state: 'dead', attempts: 4, last_error: 'HTTP_500' });
    expect(r.count).toBe(4);
    const at = r.requests.map((q) => q.monotonicMs);
    const gaps = at.slice(1).map((t, i) => t - (at[i] as number));
    // Each retry waits at least its delay after the failure; generous upper bounds for a loaded machine.
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual((delays[i] as number) - 2);
      expect(gap).toBeLessThan((delays[i] as number) + 5_000);
    });
    expect(gaps[0]).toBeLessThan(gaps[1] as number);
    expect(gaps[1]).toBeLessThan(gaps[2] as number);
    const warn = fx.logs.find((l) => l.msg === 'webhook dead letter');
    expect(warn).toMatchObject({ level: 40, outboxId: id, clientId, attempts: 4, lastError: 'HTTP_500' });
    expect(JSON.stringify(fx.logs)).not.toContain('whsec');
  });

  it('leaves a dead letter put: ten polls later (stepped on a manual clock) it was not sent again', async () => {
    const r = await receiver('whsec');
    r.respondWith(() => ({ kind: 'status', statusCode: 500 }));
    const clientId = fx.addClient('down-for-good', { url: r.url, secret: 'whsec' });
    const id = queue(clientId, '353873333334');
    const clock = new ManualClock(Date.now());
    const pollIntervalMs = 20;
    const s = new WebhookSender({
      store: fx.store, secretBox: fx.secretBox, logger: fx.logger, config: { ...FAST, retryDelaysMs: [50, 200, 800], redriveWithinMs: 0 },
      pollIntervalMs, flushIntervalMs: 1, clock,
    });
    senders.push(s);
    s.start();
    // Each step: the sender has written every answer, then the clock moves to its next timer (a poll or the retry).
    for (let step = 0; step < 200 && fx.row(id).state === 'pending'; step++) {
      await s.whenIdle();
      if (fx.row(id).state === 'pending') clock.advanceToNextTimer();
    }
    expect(fx.row(id)).toMatchObject({ state: 'dead', attempts: 4 });
    expect(r.count).toBe(4);
    for (let poll = 0; poll < 10; poll++) {
      await s.whenIdle();
      clock.advanceTo(clock.now() + pollIntervalMs);
    }
    await s.whenIdle();
    expect(r.count).toBe(4);
    expect(fx.row(id).state).toBe('dead');
  });

  it('opens the breaker after two transient failures: the next attempts fail fast with no request; it closes after its window', async () => {
    const r = await receiver('whsec');
    r.respondWith(() => ({ kind: 'status', statusCode: 500 }));
    const clientId = fx.addClient('breaker', { url: r.url, secret: 'whsec' });
    const id = queue(clientId, '353874444444');
    // Redrive off: this test replays the dead letter itself once the breaker half-opens (a probe would race it).
    const s = sender({ breakerFailures: 2, breakerOpenMs: 1_500, retryDelaysMs: [20, 20, 20], concurrency: 1, redriveWithinMs: 0 });
    s.start();
    await settled(id);
    // Attempts 1 and 2 were requests (500, 500); attempts 3 and 4 were refused by the open breaker.
    expect(fx.row(id)).toMatchObject({ state: 'dead', attempts: 4, last_error: 'CIRCUIT_OPEN' });
    expect(r.count).toBe(2);
    expect(s.breakerState(clientId, r.url)).toBe('open');
    expect(s.stats()).toMatchObject({ requests: 2, circuitOpenFastFails: 2, deadLetters: 1 });
    expect(fx.logs.some((l) => l.msg.startsWith('webhook circuit breaker opened') && l['cause'] === 'HTTP_500' && l['clientId'] === clientId)).toBe(true);

    await vi.waitFor(() => expect(s.breakerState(clientId, r.url)).toBe('half-open'), WAIT);
    r.respondWith(() => ({ kind: 'status', statusCode: 200 }));
    expect(requeueDeadLetters(fx.store.db, { clientId }, Date.now())).toEqual([id]);
    await settled(id);
    expect(fx.row(id)).toMatchObject({ state: 'delivered', attempts: 1 });
    expect(r.count).toBe(3);
    expect(s.breakerState(clientId, r.url)).toBe('closed');
  });

  it('does not count a permanent 4xx toward the breaker', async () => {
    const r = await receiver('whsec');
    r.script({ kind: 'status', statusCode: 400 }, { kind: 'status', statusCode: 500 });
    const clientId = fx.addClient('mixed', { url: r.url, secret: 'whsec' });
    const refused = queue(clientId, '353875555551');
    const retried = queue(clientId, '353875555552');
    const s = sender({ breakerFailures: 2, concurrency: 1 });
    s.start();
    await settled(refused);
    await settled(retried);
    expect(fx.row(refused)).toMatchObject({ state: 'dead', attempts: 1, last_error: 'HTTP_400' });
    // Had the 400 counted, the 500 after it would have opened the breaker and the retry would fail fast.
    expect(fx.row(retried)).toMatchObject({ state: 'delivered', attempts: 2 });
    expect(r.count).toBe(3);
    expect(s.stats().circuitOpenFastFails).toBe(0);
  });

  it('sends rows left pending by an earlier run, including one whose attempt was in flight at a crash', async () => {
    const r = await receiver('whsec');
    const clientId = fx.addClient('restart', { url: r.url, secret: 'whsec' });
    const fresh = queue(clientId, '353876666661');
    const interrupted = queue(clientId, '353876666662');
    fx.store.db.prepare(`UPDATE webhook_outbox SET attempts = 2, last_error = 'TIMEOUT', next_attempt_at = ? WHERE id = ?`).run(Date.now() - 1_000, interrupted);
    sender().start();
    await settled(fresh);
    await settled(interrupted);
    expect(fx.row(fresh)).toMatchObject({ state: 'delivered', attempts: 1 });
    expect(fx.row(interrupted)).toMatchObject({ state: 'delivered', attempts: 3 });
    expect(r.count).toBe(2);
  });

  it('retries a refused connection (nobody listening) and keeps it as a dead letter after the last retry', async () => {
    const closed = await receiver(null);
    const url = closed.url;
    await closed.close();
    receivers.splice(receivers.indexOf(closed), 1);
    const clientId = fx.addClient('nobody-home', { url });
    const id = queue(clientId, '353870303030');
    sender().start();
    await settled(id);
    expect(fx.row(id)).toMatchObject({ state: 'dead', attempts: 4, last_error: 'ECONNREFUSED' });
  });

  it('does not retry a webhook URL it cannot use (not http or https)', async () => {
    const clientId = fx.addClient('ftp', { url: 'ftp://127.0.0.1/hook' });
    const id = queue(clientId, '353870404040');
    sender().start();
    await settled(id);
    expect(fx.row(id)).toMatchObject({ state: 'dead', attempts: 1, last_error: 'INVALID_URL' });
  });

  it('reads the webhook URL at send time, so changing it redirects pending events', async () => {
    const oldReceiver = await receiver('whsec');
    const newReceiver = await receiver('new-secret');
    const clientId = fx.addClient('moving', { url: oldReceiver.url, secret: 'whsec' });
    const id = queue(clientId, '353877777777');
    fx.setWebhook(clientId, newReceiver.url, 'new-secret');
    sender().start();
    await settled(id);
    expect(fx.row(id).state).toBe('delivered');
    expect(oldReceiver.count).toBe(0);
    expect(newReceiver.requests[0]?.signatureOk).toBe(true);
  });

  it('turns an event whose client lost its webhook URL into a dead letter NO_WEBHOOK_URL', async () => {
    const clientId = fx.addClient('gone', { url: 'http://127.0.0.1:9/hook' });
    const id = queue(clientId, '353878888888');
    fx.setWebhook(clientId, null);
    sender().start();
    await settled(id);
    expect(fx.row(id)).toMatchObject({ state: 'dead', attempts: 1, last_error: 'NO_WEBHOOK_URL' });
  });

  it('picks up new rows on wake() without waiting for the poll', async () => {
    const r = await receiver('whsec');
    const clientId = fx.addClient('wake', { url: r.url, secret: 'whsec' });
    const s = sender({}, { pollIntervalMs: 600_000 });
    s.start();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const id = queue(clientId, '353879999999');
    s.wake();
    await settled(id);
    expect(fx.row(id).state).toBe('delivered');
  });

  it('sends rows queued without wake() (another process, such as a replay) at the next poll, also after it went idle', async () => {
    const r = await receiver('whsec');
    const clientId = fx.addClient('poll', { url: r.url, secret: 'whsec' });
    const first = queue(clientId, '353870000001');
    const s = sender({}, { pollIntervalMs: 20 });
    s.start();
    await settled(first);
    await s.whenIdle();
    // No wake(): only the poll can find these.
    const later = [queue(clientId, '353870000002'), queue(clientId, '353870000003')];
    for (const id of later) await settled(id);
    expect(later.map((id) => fx.row(id).state)).toEqual(['delivered', 'delivered']);
    expect(r.count).toBe(3);
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    const r = await receiver('whsec');
    r.respondWith(() => ({ kind: 'status', statusCode: 200, delayMs: 30 }));
    const clientId = fx.addClient('busy', { url: r.url, secret: 'whsec' });
    const ids = Array.from({ length: 20 }, (_, i) => queue(clientId, `35387000${String(i).padStart(4, '0')}`));
    const real = createNodeHttpClient({ maxSockets: 8 });
    let inFlight = 0;
    let maxInFlight = 0;
    const counting: WebhookHttpClient = {
      async post(request) {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          return await real.post(request);
        } finally {
          inFlight -= 1;
        }
      },
      close: () => real.close(),
    };
    const s = sender({ concurrency: 3 }, { httpClient: counting });
    s.start();
    for (const id of ids) await settled(id);
    expect(fx.outbox().every((row) => row.state === 'delivered')).toBe(true);
    expect(maxInFlight).toBe(3);
    expect(r.count).toBe(20);
    real.close();
  });

  it('stop() waits for a request in flight and writes its result', async () => {
    const r = await receiver('whsec');
    r.script({ kind: 'status', statusCode: 204, delayMs: 150 });
    const clientId = fx.addClient('stopping', { url: r.url, secret: 'whsec' });
    const id = queue(clientId, '353870101010');
    const s = sender();
    s.start();
    await r.waitForCount(1);
    await s.stop();
    expect(fx.row(id)).toMatchObject({ state: 'delivered', attempts: 1 });
  });

  it('stop() is bounded: an unanswered request stays pending and is sent again by the next start', async () => {
    const r = await receiver('whsec');
    r.script({ kind: 'hang' });
    const clientId = fx.addClient('hung', { url: r.url, secret: 'whsec' });
    const id = queue(clientId, '353870202020');
    const first = new WebhookSender({
      store: fx.store, secretBox: fx.secretBox, logger: fx.logger, config: { ...FAST, timeoutMs: 60_000 }, stopTimeoutMs: 50, pollIntervalMs: 20,
    });
    first.start();
    await r.waitForCount(1);
    await first.stop();
    expect(fx.row(id)).toMatchObject({ state: 'pending', attempts: 0 });
    sender().start();
    await settled(id);
    expect(fx.row(id)).toMatchObject({ state: 'delivered', attempts: 1 });
    expect(r.count).toBe(2);
  });
});
