/**
 * End to end over real sockets, in one process: HTTP API -> campaign processor -> engine -> SMPP
 * transport -> test SMSC on 127.0.0.1 -> deliver_sm receipts -> webhook sender -> a receiver that
 * verifies X-Signature. One-part and multi-part texts.
 */
import { createHmac } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/index.js';
import { seedAccount, writeGatewayConfig, type SeededAccount } from '../support/gateway-process.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { baseUrlOf, gatewayConfig, getSummary, postCampaign, tempDir, until } from './e2e-setup.js';

const SECRET = 'e2e-webhook-secret';
let dir: string;
let smsc: ReceiptingSmsc;
let receiver: WebhookReceiver;
let gateway: Gateway;
let account: SeededAccount;
let baseUrl: string;

beforeAll(async () => {
  dir = tempDir('e2e');
  smsc = await ReceiptingSmsc.start({ statusFor: (to) => (to.endsWith('9') ? 'UNDELIV' : 'DELIVRD') });
  receiver = await WebhookReceiver.start({ secret: SECRET });
  const { config } = writeGatewayConfig(dir, gatewayConfig(dir, smsc.address));
  account = await seedAccount(config, { webhookUrl: receiver.url, webhookSecret: SECRET, senders: [{ name: 'Bistro', type: 0 }] });
  gateway = await createGateway(config);
  await gateway.start();
  baseUrl = baseUrlOf(gateway);
});

afterAll(async () => {
  await gateway?.stop();
  await receiver?.close();
  await smsc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('campaign to signed webhooks over SMPP', () => {
  it('sends a one-part campaign and every recipient gets one signed Delivery Receipt', async () => {
    const before = receiver.count;
    const { status, id } = await postCampaign(baseUrl, account.token, {
      text: 'Your table is ready',
      from: 'Bistro',
      recipientInfo: [
        { msisdn: '0871234561', ClientReference: 'r-1' },
        { msisdn: '+447700900123' },
        { msisdn: '353871234569', ClientReference: 'r-3' },
      ],
    });
    expect(status).toBe(202);
    await receiver.waitForCount(before + 3, 20_000);
    const received = receiver.requests.slice(before);
    expect(received.every((r) => r.signatureOk === true)).toBe(true);
    for (const r of received) {
      // Independent check: HMAC-SHA256 over the exact raw bytes received.
      expect(r.signature).toBe(`sha256=${createHmac('sha256', SECRET).update(r.rawBody).digest('hex')}`);
    }
    const bodies = received.map((r) => r.rawBody.toString('utf8')).sort();
    expect(bodies).toEqual([
      '{"To":"353871234561","From":"Bistro","Status":"DELIVRD","ClientReference":"r-1"}',
      '{"To":"353871234569","From":"Bistro","Status":"UNDELIV","ClientReference":"r-3"}',
      '{"To":"447700900123","From":"Bistro","Status":"DELIVRD","ClientReference":null}',
    ]);
    const summary = await until(() => getSummary(baseUrl, account.token, id), (s) => s?.pending === 0, 10_000, 'summary');
    expect(summary).toEqual({ totalSent: 3, delivered: 2, undelivered: 1, pending: 0 });
  });

  it('sends a three-part GSM-7 text as three submit_sm with one UDH reference and one webhook', async () => {
    const before = receiver.count;
    const submitsBefore = smsc.submitCount;
    const text = `${'Long message. '.repeat(24)}end`;
    const { id } = await postCampaign(baseUrl, account.token, { text, from: 'Bistro', recipientInfo: [{ msisdn: '353870000001' }] });
    await receiver.waitForCount(before + 1, 20_000);
    expect(smsc.submitCount - submitsBefore).toBe(3);
    expect(smsc.submitsByDestination.get('353870000001')).toBe(3);
    expect(receiver.requests[before]?.rawBody.toString('utf8')).toBe('{"To":"353870000001","From":"Bistro","Status":"DELIVRD","ClientReference":null}');
    const summary = await until(() => getSummary(baseUrl, account.token, id), (s) => s?.pending === 0, 10_000, 'summary');
    expect(summary).toEqual({ totalSent: 1, delivered: 1, undelivered: 0, pending: 0 });
    const parts = gateway.store.db
      .prepare('SELECT part_number, parts_total, concat_reference, state FROM message_parts WHERE campaign_id = ? ORDER BY part_number')
      .all(id) as { part_number: number; parts_total: number; concat_reference: number; state: string }[];
    expect(parts.map((p) => [p.part_number, p.parts_total, p.state])).toEqual([
      [1, 3, 'delivered'],
      [2, 3, 'delivered'],
      [3, 3, 'delivered'],
    ]);
    expect(new Set(parts.map((p) => p.concat_reference)).size).toBe(1);
  });

  it('sends a multi-part UCS-2 text and reports undelivered when its receipts say UNDELIV', async () => {
    const before = receiver.count;
    const text = 'Привет! '.repeat(12);
    const { id } = await postCampaign(baseUrl, account.token, { text, from: 'Bistro', recipientInfo: [{ msisdn: '353870000009', ClientReference: 'ucs' }] });
    await receiver.waitForCount(before + 1, 20_000);
    expect(smsc.submitsByDestination.get('353870000009')).toBe(2);
    expect(receiver.requests[before]?.rawBody.toString('utf8')).toBe('{"To":"353870000009","From":"Bistro","Status":"UNDELIV","ClientReference":"ucs"}');
    const summary = await until(() => getSummary(baseUrl, account.token, id), (s) => s?.pending === 0, 10_000, 'summary');
    expect(summary).toEqual({ totalSent: 1, delivered: 0, undelivered: 1, pending: 0 });
  });
});
