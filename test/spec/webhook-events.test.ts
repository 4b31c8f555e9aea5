/**
 * SPEC.md "Events" 4-6 and "Limits" (webhook retries): a 2xx is not retried; network failures, 404,
 * 408 and 5xx are retried up to three times; other 4xx (400, 401, 403) are not retried. Also
 * "Recipient": ClientReference is returned unchanged and need not be unique, and `from` is trimmed.
 * The retry delays and the breaker are shortened in the config (webhooks.retryDelaysMs,
 * webhooks.breakerFailures) so the test exercises the retry rule, not the 2/4/8 s clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver, type ReceivedWebhook } from '../support/webhook-receiver.js';
import { createReadyCampaign, eventually, getWithToken, SpecServer, type SpecAccount, type Summary } from './spec-server.js';

/** The number's last two digits decide the receiver's answer to every attempt for it. */
const ALWAYS: Record<string, number> = { '11': 500, '12': 400, '13': 401, '14': 403, '15': 404, '16': 408, '17': 503 };

let server: SpecServer;
let receiver: WebhookReceiver;
let acme: SpecAccount;

beforeAll(async () => {
  receiver = await WebhookReceiver.start({ secret: 'events-secret' });
  receiver.respondWith((request) => {
    const to = (JSON.parse(request.rawBody.toString('utf8')) as { To: string }).To;
    const scripted = ALWAYS[to.slice(-2)];
    if (scripted !== undefined) return { kind: 'status', statusCode: scripted };
    // ...21 fails once with 500 and then succeeds (the request is recorded after the responder runs).
    if (to.endsWith('21') && attemptsFor(to) === 0) return { kind: 'status', statusCode: 500 };
    return undefined;
  });
  // Automatic redrive off (redriveWithinMs 0): these tests count the requests of one retry series,
  // and with a 50 ms breaker window the always-failing numbers would be redriven after every 2xx.
  server = await SpecServer.start({ config: { webhooks: { retryDelaysMs: [50, 50, 50], breakerFailures: 1_000, breakerOpenMs: 50, redriveWithinMs: 0 } } });
  acme = await server.createAccount('acme', { webhookUrl: receiver.url, webhookSecret: 'events-secret', senders: [{ name: 'Acme', type: 0 }] });
}, 180_000);
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
});

function requestsFor(to: string): ReceivedWebhook[] {
  return receiver.requests.filter((r) => (JSON.parse(r.rawBody.toString('utf8')) as { To: string }).To === to);
}

function attemptsFor(to: string): number {
  return requestsFor(to).length;
}

async function settled(id: string): Promise<Summary> {
  return eventually(async () => {
    const res = await getWithToken(server.url(`/v1/campaign/${id}`), acme.token);
    const body = (await res.json()) as Summary;
    return res.status === 200 && body.pending === 0 ? body : undefined;
  }, `campaign ${id} to settle`);
}

describe('Webhook retries (Events 4-6)', () => {
  it('retries 5xx, 404 and 408 up to three times (four requests), and stops after a success', async () => {
    const retried = ['447700900011', '447700900015', '447700900016', '447700900017'];
    const recovered = '447700900021';
    const { id } = await createReadyCampaign(server, acme.token, { text: 'Retry', from: 'Acme', recipientInfo: [...retried, recovered].map((msisdn) => ({ msisdn })) });
    await settled(id);
    await receiver.waitUntil(() => retried.every((to) => attemptsFor(to) >= 4) && attemptsFor(recovered) >= 2, 20_000, 'the retries');
    for (const to of retried) expect(attemptsFor(to), to).toBe(4);
    expect(attemptsFor(recovered)).toBe(2);
    // The same event each time: identical raw bytes.
    for (const to of [...retried, recovered]) expect(new Set(requestsFor(to).map((r) => r.rawBody.toString('utf8'))).size).toBe(1);
  });

  it('does not retry 2xx, 400, 401 or 403', async () => {
    const notRetried = ['447700900012', '447700900013', '447700900014'];
    const delivered = '447700900031';
    // Numbers that are retried ride along: once they have used all their retries, a retry of the
    // others would have happened too.
    const marker = '447700900111';
    const { id } = await createReadyCampaign(server, acme.token, { text: 'No retry', from: 'Acme', recipientInfo: [...notRetried, delivered, marker].map((msisdn) => ({ msisdn })) });
    await settled(id);
    await receiver.waitUntil(() => attemptsFor(marker) >= 4, 20_000, 'the marker to use its retries');
    for (const to of [...notRetried, delivered]) expect(attemptsFor(to), to).toBe(1);
  });
});

describe('Delivery Receipt fields', () => {
  it('returns ClientReference unchanged (need not be unique) and From as the trimmed sender id', async () => {
    const { id } = await createReadyCampaign(server, acme.token, {
      text: 'Refs', from: '  Acme  ',
      recipientInfo: [{ msisdn: '447700900041', ClientReference: 'same ref' }, { msisdn: '447700900042', ClientReference: 'same ref' }, { msisdn: '447700900043', ClientReference: ' ünï ' }],
    });
    expect(await settled(id)).toEqual({ totalSent: 3, delivered: 3, undelivered: 0, pending: 0 });
    await receiver.waitUntil(() => ['447700900041', '447700900042', '447700900043'].every((to) => attemptsFor(to) >= 1));
    const body = (to: string): unknown => JSON.parse(requestsFor(to)[0]!.rawBody.toString('utf8'));
    expect(body('447700900041')).toEqual({ To: '447700900041', From: 'Acme', Status: 'DELIVRD', ClientReference: 'same ref' });
    expect(body('447700900042')).toEqual({ To: '447700900042', From: 'Acme', Status: 'DELIVRD', ClientReference: 'same ref' });
    expect(body('447700900043')).toEqual({ To: '447700900043', From: 'Acme', Status: 'DELIVRD', ClientReference: ' ünï ' });
  });
});

describe('Circuit breaker (Events 7): open for 30 s after two transient failures', () => {
  let breakerServer: SpecServer;
  let failing: WebhookReceiver;
  let account: SpecAccount;
  beforeAll(async () => {
    failing = await WebhookReceiver.start({ defaultResponse: { kind: 'status', statusCode: 500 } });
    // Default breaker (two failures, 30 s); only the retry delays are shortened.
    breakerServer = await SpecServer.start({ config: { webhooks: { retryDelaysMs: [50, 50, 50] } } });
    account = await breakerServer.createAccount('flaky', { webhookUrl: failing.url, senders: [{ name: 'Flaky', type: 0 }] });
  }, 180_000);
  afterAll(async () => {
    await breakerServer?.stop();
    await failing?.close();
  });

  it('makes two requests, then fails the remaining retries fast without a request while open', async () => {
    const { id } = await createReadyCampaign(breakerServer, account.token, { text: 'Breaker', from: 'Flaky', recipientInfo: [{ msisdn: '447700900051' }] });
    await eventually(async () => {
      const res = await getWithToken(breakerServer.url(`/v1/campaign/${id}`), account.token);
      return ((await res.json()) as Summary).pending === 0 ? true : undefined;
    }, 'the receipt');
    await failing.waitForCount(2);
    // The series is over when its last retry, refused by the open breaker, made the row a dead
    // letter (`smsgate webhook list --failed`): no request can come after that (30 s breaker window).
    const dead = await eventually(async () => {
      const rows = (await breakerServer.cli('webhook', 'list', '--failed', '--client', 'flaky')) as unknown as { attempts: number; lastError: string | null }[];
      return rows.length === 1 ? rows[0] : undefined;
    }, 'the dead letter');
    expect(dead).toMatchObject({ attempts: 4, lastError: 'CIRCUIT_OPEN' });
    expect(failing.count).toBe(2);
  });
});
