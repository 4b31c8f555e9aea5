/**
 * Receipts that beat their submit_sm_resp, over real SMPP: the test SMSC sends each deliver_sm
 * receipt BEFORE answering the submit_sm, with the id in hex in the receipt and in the response.
 * Whether the receipt lands in the same group commit as the response (outcomes are written first)
 * or in an earlier one (then it is parked as pending and matched when the message id is written;
 * test/engine covers that ordering deterministically), every receipt ends matched to its part and
 * every recipient delivered with one webhook.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/index.js';
import { seedAccount, writeGatewayConfig, type SeededAccount } from '../support/gateway-process.js';
import { TestSmsc } from '../support/smsc/test-smsc.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { baseUrlOf, gatewayConfig, getSummary, postCampaign, tempDir, until } from './e2e-setup.js';

let dir: string;
let smsc: TestSmsc;
let receiver: WebhookReceiver;
let gateway: Gateway;
let account: SeededAccount;

beforeAll(async () => {
  dir = tempDir('early');
  smsc = await TestSmsc.start({ idFormat: 'hex', autoReceipt: { stat: 'DELIVRD', beforeResponse: true }, responseDelayMs: 20 });
  receiver = await WebhookReceiver.start();
  const { config } = writeGatewayConfig(dir, gatewayConfig(dir, smsc.address));
  account = await seedAccount(config, { webhookUrl: receiver.url, senders: [{ name: 'Early', type: 0 }] });
  gateway = await createGateway(config);
  await gateway.start();
});

afterAll(async () => {
  await gateway?.stop();
  await receiver?.close();
  await smsc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('receipts before submit_sm_resp', () => {
  it('matches every early receipt to its part', async () => {
    const baseUrl = baseUrlOf(gateway);
    const msisdns = Array.from({ length: 20 }, (_, i) => `3538755500${String(i).padStart(2, '0')}`);
    const { status, id } = await postCampaign(baseUrl, account.token, { text: 'Early bird', from: 'Early', recipientInfo: msisdns.map((msisdn) => ({ msisdn })) });
    expect(status).toBe(202);
    const summary = await until(() => getSummary(baseUrl, account.token, id), (s) => s?.pending === 0, 20_000, 'every recipient final');
    expect(summary).toEqual({ totalSent: 20, delivered: 20, undelivered: 0, pending: 0 });
    await receiver.waitForCount(20, 20_000);
    expect(new Set((receiver.bodies() as { To: string; Status: string }[]).map((b) => `${b.To}:${b.Status}`))).toEqual(new Set(msisdns.map((m) => `${m}:DELIVRD`)));
    const receipts = gateway.store.db.prepare('SELECT match_state, part_id FROM receipts').all() as { match_state: string; part_id: number | null }[];
    expect(receipts).toHaveLength(20);
    expect(receipts.every((r) => r.match_state === 'matched' && r.part_id !== null)).toBe(true);
    const stats = gateway.engine.stats();
    expect(stats.receiptsMatched + stats.receiptsParked).toBe(20);
  });
});
