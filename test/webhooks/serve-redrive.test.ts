/**
 * Its webhook receiver answers 503 for longer
 * than a retry series, every event becomes a dead letter, then the receiver recovers and every
 * event is delivered with no operator command. The config shortens the series and the breaker window
 * (webhooks.retryDelaysMs, breakerOpenMs) so the outage takes seconds; webhook-redrive.test.ts runs
 * the spec's own 2/4/8 s and 30 s on a stepped clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadyCampaign, eventually, SpecServer, type SpecAccount } from '../spec/spec-server.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('smsgate serve redrives dead letters when the receiver comes back', () => {
  let server: SpecServer;
  let receiver: WebhookReceiver;
  let account: SpecAccount;
  let down = true;
  beforeAll(async () => {
    receiver = await WebhookReceiver.start({ secret: 'redrive-secret' });
    receiver.respondWith(() => (down ? { kind: 'status', statusCode: 503 } : undefined));
    server = await SpecServer.start({ config: { webhooks: { retryDelaysMs: [100, 200, 400], breakerOpenMs: 1_500 } } });
    account = await server.createAccount('outage', { webhookUrl: receiver.url, webhookSecret: 'redrive-secret', senders: [{ name: 'Outage', type: 0 }] });
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  it('dead letters of a 503 outage are delivered once the receiver answers 2xx, each with one X-Event-Id', async () => {
    const recipients = ['447700900601', '447700900602', '447700900603'];
    await createReadyCampaign(server, account.token, { text: 'Outage', from: 'Outage', recipientInfo: recipients.map((msisdn) => ({ msisdn })) });
    await eventually(async () => ((await server.cli('webhook', 'list'))['dead'] === 3 ? true : undefined), 'three dead letters', 30_000);
    const failed = (await server.cli('webhook', 'list', '--failed')) as unknown as { eventId: string; reason: string; lastError: string }[];
    expect(failed.map((f) => f.reason)).toEqual(['transient', 'transient', 'transient']);
    down = false;
    // No operator command from here on.
    await receiver.waitUntil(() => receiver.acknowledged >= 3, 30_000, 'three acknowledged webhooks');
    expect(await server.cli('webhook', 'list')).toEqual({ pending: 0, delivered: 3, dead: 0 });
    const byTo = new Map<string, Set<string | string[] | undefined>>();
    for (const r of receiver.requests) {
      const to = (JSON.parse(r.rawBody.toString('utf8')) as { To: string }).To;
      byTo.set(to, (byTo.get(to) ?? new Set()).add(r.headers['x-event-id']));
    }
    expect([...byTo.keys()].sort()).toEqual(recipients);
    const ids = [...byTo.values()].map((set) => {
      expect(set.size).toBe(1);
      return [...set][0] as string;
    });
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(3);
    expect(new Set(failed.map((f) => f.eventId))).toEqual(new Set(ids));
    expect(receiver.signatureFailures).toBe(0);
    expect(server.allLines.some((line) => line.includes('its dead letters are re-queued'))).toBe(true);
  }, 90_000);
});
