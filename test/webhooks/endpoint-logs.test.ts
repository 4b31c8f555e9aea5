/**
 * A dead webhook endpoint is logged as an outage, not once per event: 2,000 events for one client
 * whose receiver refuses connections (nothing listens on its port) write a handful of lines, the
 * first naming the real cause (ECONNREFUSED) and the endpoint's host; when the receiver comes up
 * the breaker closes with one line, and the status page's recent errors hold those two entries.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RecentErrors, tapLogger } from '../../src/admin/recent-errors.js';
import { EndpointLogs } from '../../src/webhooks/endpoint-logs.js';
import { enqueueDeliveryReceipts, WebhookSender, type DeliveryReceiptEvent } from '../../src/webhooks/index.js';
import { freePort } from '../support/free-port.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { openWebhookFixture, type WebhookFixture } from './fixture.js';

const EVENTS = 2_000;
/** The task's bound on the lines a dead endpoint may write for 2,000 events. */
const MAX_LINES = 5;
const WAIT = { timeout: 60_000, interval: 20 };

describe('a webhook endpoint that refuses connections', () => {
  let fx: WebhookFixture;
  let sender: WebhookSender | undefined;
  let receiver: WebhookReceiver | undefined;
  beforeEach(async () => {
    fx = await openWebhookFixture();
  });
  afterEach(async () => {
    await sender?.stop();
    await receiver?.close();
    await fx.close();
  });

  it('logs the breaker opening with ECONNREFUSED and its closing, not a line per event', async () => {
    const port = await freePort();
    // user:password and a token in the path: neither may reach a log line.
    const url = `http://hook-user:hook-pass@127.0.0.1:${port}/hooks/tok_secret123`;
    const clientId = fx.addClient('acme', { url, secret: 'whsec' });
    const events: DeliveryReceiptEvent[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const msisdn = `3538712${String(i).padStart(5, '0')}`;
      events.push({ clientId, recipientId: fx.addRecipient(clientId, msisdn), to: msisdn, from: 'Gate', status: 'DELIVRD', clientReference: null });
    }
    enqueueDeliveryReceipts(fx.store.db, events, Date.now());

    const recent = new RecentErrors(50);
    sender = new WebhookSender({
      store: fx.store,
      secretBox: fx.secretBox,
      logger: tapLogger(fx.logger, recent),
      // The spec's breaker (two transient failures) with a short window and short retries, so the
      // test does not wait 30 s; the log interval is the production one (30 s).
      config: { timeoutMs: 2_000, retryDelaysMs: [50, 100, 200], breakerOpenMs: 1_000, breakerFailures: 2, concurrency: 16 },
      pollIntervalMs: 20,
      flushIntervalMs: 5,
    });
    sender.start();
    const states = (): Record<string, number> =>
      Object.fromEntries((fx.store.db.prepare('SELECT state, COUNT(*) AS n FROM webhook_outbox GROUP BY state').all() as { state: string; n: number }[]).map((r) => [r.state, r.n]));
    // Every event tried and retried until its retries ran out while the breaker was open.
    await vi.waitFor(() => expect(states()).toEqual({ dead: EVENTS }), WAIT);
    // Redrive probes follow, one per breaker window, each the breaker's trial: once the third is
    // sent the first two have failed (a refused connection fails at once), and said nothing per event.
    const s = sender;
    await vi.waitFor(() => expect(s.stats().probes).toBeGreaterThanOrEqual(3), WAIT);

    const whileDown = [...fx.logs];
    console.log(`lines while down for ${EVENTS} events: ${whileDown.length}`, whileDown.map((l) => l.msg));
    expect(whileDown.length).toBeLessThanOrEqual(MAX_LINES);
    const opened = whileDown.filter((l) => l.msg.startsWith('webhook circuit breaker opened'));
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ level: 40, cause: 'ECONNREFUSED', clientId, host: `127.0.0.1:${port}` });
    expect(whileDown.filter((l) => l.msg === 'webhook dead letter')).toHaveLength(0);
    expect(JSON.stringify(fx.logs)).not.toMatch(/hook-pass|tok_secret123|hook-user/);

    // The receiver comes up where the endpoint points: the next trial (a redrive probe) closes the breaker.
    receiver = await WebhookReceiver.start({ secret: 'whsec', port });
    await vi.waitFor(() => expect(fx.logs.some((l) => l.msg.startsWith('webhook circuit breaker closed'))).toBe(true), WAIT);
    const closed = fx.logs.find((l) => l.msg.startsWith('webhook circuit breaker closed'));
    expect(closed).toMatchObject({ level: 40, clientId, host: `127.0.0.1:${port}` });
    expect(closed?.['eventsHeld']).toBeGreaterThan(0);
    expect(closed?.['deadLetters']).toBe(EVENTS);
    // The dead letters are redriven and delivered; still no line per event.
    await vi.waitFor(() => expect(states()).toEqual({ delivered: EVENTS }), WAIT);
    console.log(`lines in all: ${fx.logs.length}`, fx.logs.map((l) => l.msg));
    expect(fx.logs.length).toBeLessThanOrEqual(MAX_LINES + 2);

    // The status page's recent errors: the opening (with its cause) and the closing, nothing per event.
    const entries = recent.list();
    expect(entries.map((e) => e.message.split(':')[0])).toEqual(['webhook circuit breaker closed', 'webhook circuit breaker opened']);
    expect(entries[1]?.context).toMatchObject({ cause: 'ECONNREFUSED', host: `127.0.0.1:${port}`, clientId: String(clientId) });
  }, 120_000);
});

describe('EndpointLogs summaries', () => {
  it('says how many events were held at most once per endpoint per 30 s, and dead letters outside an outage once per 30 s', async () => {
    const fx = await openWebhookFixture();
    try {
      let nowMs = 1_000_000;
      const logs = new EndpointLogs(fx.logger, () => nowMs);
      const a = { clientId: 1, url: 'https://u:p@a.example/hook?token=x' };
      const b = { clientId: 2, url: 'https://b.example/hook' };
      logs.breakerOpened('A', a, 'TIMEOUT', 30_000);
      for (let i = 0; i < 500; i++, nowMs += 50) logs.held('A');
      logs.flush();
      // 25 s: nothing more yet.
      expect(fx.logs.map((l) => l.msg)).toEqual(['webhook circuit breaker opened: endpoint failing, its events are held and retried']);
      nowMs = 1_000_000 + 30_000;
      logs.flush();
      logs.flush();
      expect(fx.logs).toHaveLength(2);
      expect(fx.logs[1]).toMatchObject({ level: 30, msg: 'webhook circuit breaker still open: events held', eventsHeld: 500, clientId: 1, host: 'a.example', cause: 'TIMEOUT' });
      logs.breakerOpened('A', a, 'TIMEOUT', 30_000);
      logs.held('A');
      logs.breakerClosed('A');
      expect(fx.logs[2]).toMatchObject({ level: 40, msg: 'webhook circuit breaker closed: endpoint answers again', eventsHeld: 501, failures: 2 });

      // B answers 400 to every event: the first dead letter at once, then one line per 30 s counting them.
      for (let i = 0; i < 100; i++) logs.deadLetter('B', b, { outboxId: i, lastError: 'HTTP_400' });
      expect(fx.logs.filter((l) => l.msg.startsWith('webhook dead letter'))).toHaveLength(1);
      nowMs += 30_000;
      logs.flush();
      expect(fx.logs.filter((l) => l.msg.startsWith('webhook dead letter'))).toHaveLength(2);
      expect(fx.logs.at(-1)).toMatchObject({ level: 40, failuresSinceLastLine: 99, lastError: 'HTTP_400', host: 'b.example' });
      expect(JSON.stringify(fx.logs)).not.toMatch(/token=x|u:p/);
    } finally {
      await fx.close();
    }
  });
});
