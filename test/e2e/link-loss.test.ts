/**
 * The SMSC drops the connection in the middle of a campaign: parts in flight come back as
 * temporary failures and are retried, parts not yet sent wait while the link is down, and once
 * the transport binds again every recipient is delivered with one webhook each.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/index.js';
import { seedAccount, writeGatewayConfig, type SeededAccount } from '../support/gateway-process.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { baseUrlOf, gatewayConfig, getSummary, postCampaign, tempDir, until } from './e2e-setup.js';

const RECIPIENTS = 2_000;
let dir: string;
let smsc: ReceiptingSmsc;
let receiver: WebhookReceiver;
let gateway: Gateway;
let account: SeededAccount;

beforeAll(async () => {
  dir = tempDir('link');
  smsc = await ReceiptingSmsc.start();
  receiver = await WebhookReceiver.start();
  const raw = gatewayConfig(dir, smsc.address, { maxPerSecond: 2_000 });
  const { config } = writeGatewayConfig(dir, raw);
  account = await seedAccount(config, { webhookUrl: receiver.url, senders: [{ name: 'Link', type: 0 }] });
  gateway = await createGateway(config);
  await gateway.start();
});

afterAll(async () => {
  await gateway?.stop();
  await receiver?.close();
  await smsc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('SMSC connection lost mid-campaign', () => {
  it('holds and retries, then delivers every recipient once the bind is back', async () => {
    const baseUrl = baseUrlOf(gateway);
    const msisdns = Array.from({ length: RECIPIENTS }, (_, i) => `3538766${String(i).padStart(5, '0')}`);
    const { id } = await postCampaign(baseUrl, account.token, { text: 'Link test', from: 'Link', recipientInfo: msisdns.map((msisdn) => ({ msisdn })) });
    await until(() => smsc.submitCount, (n) => n >= RECIPIENTS / 4, 30_000, 'a quarter submitted');
    smsc.smsc.dropConnections();
    const summary = await until(() => getSummary(baseUrl, account.token, id), (s) => s?.pending === 0, 60_000, 'every recipient final');
    expect(summary).toEqual({ totalSent: RECIPIENTS, delivered: RECIPIENTS, undelivered: 0, pending: 0 });
    expect(smsc.submitsByDestination.size).toBe(RECIPIENTS);
    await receiver.waitUntil(() => new Set((receiver.bodies() as { To: string }[]).map((b) => b.To)).size === RECIPIENTS, 30_000, 'a webhook per recipient');
    // The drop happened while work was still queued: the transport went down and came back.
    const binds = smsc.smsc.bindAttempts.filter((b) => b.accepted).length;
    expect(binds).toBeGreaterThanOrEqual(2);
  });
});
