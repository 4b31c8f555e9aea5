/**
 * "a failed write never frees a window slot or strands a part", on a genuinely
 * full database: a gateway (createGateway, the code `serve` runs) sends a campaign over SMPP to
 * the test SMSC; mid-run its SQLite file is made full with `PRAGMA max_page_count` (SQLITE_FULL on
 * the next page the file needs), later given room again. Without a restart every recipient is
 * delivered, no part stays 'submitting', nothing new is submitted while the store refuses writes,
 * duplicates at the SMSC stay within the window, and the failure is logged a bounded number of times.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, createLogger, resolveConfigFromObject, type SmsGateConfig } from '../../src/index.js';
import { seedAccount, type SeededAccount } from '../support/gateway-process.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { baseUrlOf, gatewayConfig, getSummary, postCampaign, tempDir, until } from './e2e-setup.js';

const RECIPIENTS = 3_000;
const WINDOW = 10;

let dir: string;
let smsc: ReceiptingSmsc;
let receiver: WebhookReceiver;
let config: SmsGateConfig;
let account: SeededAccount;

beforeAll(async () => {
  dir = tempDir('disk-full');
  smsc = await ReceiptingSmsc.start();
  receiver = await WebhookReceiver.start({ secret: null });
  // Paced, so the file fills while most of the campaign is still to be sent.
  config = resolveConfigFromObject(gatewayConfig(dir, smsc.address, { window: WINDOW, maxPerSecond: 600 }), join(dir, 'smsgate.json'));
  account = await seedAccount(config, { webhookUrl: receiver.url, senders: [{ name: 'Shop', type: 0 }] });
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await smsc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface LogLine {
  level: number;
  msg: string;
}

describe('the database file fills up in the middle of a campaign', () => {
  it('holds the window and claims nothing while writes fail, then completes without a restart', async () => {
    const lines: LogLine[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as LogLine);
        callback();
      },
    });
    const gateway = await createGateway(config, { logger: createLogger({ level: 'info', destination }) });
    await gateway.start();
    try {
      const baseUrl = baseUrlOf(gateway);
      const msisdns = Array.from({ length: RECIPIENTS }, (_, i) => `35387${String(i).padStart(7, '0')}`);
      const { status, id } = await postCampaign(baseUrl, account.token, { text: 'Disk full test', from: 'Shop', recipientInfo: msisdns.map((msisdn) => ({ msisdn })) });
      expect(status).toBe(202);
      await until(() => smsc.submitCount, (n) => n >= 300, 60_000, '300 submits');

      // No page may be added from now on: the next receipt, outbox row or grown part row fails with SQLITE_FULL.
      const db = gateway.store.db;
      db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
      const linesBefore = lines.filter((l) => l.level >= 40).length;
      await until(() => gateway.engine.stats(), (s) => s.writesStalled && s.failedCommits >= 4, 60_000, 'the store refusing four commits');
      const submitsWhileStalled = smsc.submitCount;
      // Backoff 100, 200, 400, 800, 1,600 ms: two more refusals take well over a second of stall.
      await until(() => gateway.engine.stats(), (s) => s.failedCommits >= 6, 60_000, 'two more refused commits');
      expect(gateway.engine.stats().writesStalled).toBe(true);
      // Every window slot is held by a submit whose outcome waits for the disk: nothing new goes out.
      expect(smsc.submitCount).toBe(submitsWhileStalled);
      expect(submitsWhileStalled).toBeLessThan(RECIPIENTS);

      db.pragma('max_page_count = 1073741823');
      const summary = await until(() => getSummary(baseUrl, account.token, id), (s) => s?.pending === 0, 120_000, 'every recipient final');
      expect(summary).toEqual({ totalSent: RECIPIENTS, delivered: RECIPIENTS, undelivered: 0, pending: 0 });
      expect(smsc.submitsByDestination.size).toBe(RECIPIENTS);
      const duplicates = [...smsc.submitsByDestination.values()].reduce((sum, n) => sum + n - 1, 0);
      expect(duplicates).toBeLessThanOrEqual(WINDOW);
      expect(db.prepare(`SELECT state, COUNT(*) AS n FROM message_parts GROUP BY state`).all()).toEqual([{ state: 'delivered', n: RECIPIENTS }]);
      expect(gateway.engine.stats().writesStalled).toBe(false);

      // The stall was logged, a bounded number of times (it used to be one line per attempt and per poll).
      const failureLines = lines.filter((l) => l.level >= 40).slice(linesBefore);
      expect(failureLines.some((l) => l.msg.startsWith('committing outcomes and receipts failed'))).toBe(true);
      expect(failureLines.some((l) => l.msg.startsWith('committing outcomes and receipts works again'))).toBe(true);
      expect(failureLines.length, failureLines.map((l) => l.msg).join('\n')).toBeLessThanOrEqual(10);
    } finally {
      await gateway.stop();
    }
  }, 240_000);
});
