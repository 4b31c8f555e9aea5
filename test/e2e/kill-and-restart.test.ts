/**
 * Crash safety of a real `smsgate serve` child process: a 20,000-recipient campaign routed to an
 * SMPP test SMSC in this process, `kill -9` in the middle, a restart, then every recipient was
 * submitted at least once, duplicates are at most the in-flight window, every recipient's final
 * receipt reached the webhook receiver (signature verified), and the summary adds up. The SMSC
 * keeps unacknowledged receipts and offers them again after the restart, as a real one does.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayProcess, seedAccount, writeGatewayConfig, type SeededAccount } from '../support/gateway-process.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { expectFinalWebhooks, gatewayConfig, getSummary, postCampaign, readDatabase, tempDir, until } from './e2e-setup.js';

const RECIPIENTS = 20_000;
const WINDOW = 10;
const SECRET = 'crash-test-secret';
const statusFor = (msisdn: string): string => (msisdn.endsWith('9') ? 'UNDELIV' : 'DELIVRD');

let dir: string;
let smsc: ReceiptingSmsc;
let receiver: WebhookReceiver;
let configPath: string;
let databasePath: string;
let account: SeededAccount;
const gateways: GatewayProcess[] = [];

beforeAll(async () => {
  dir = tempDir('crash');
  smsc = await ReceiptingSmsc.start({ statusFor });
  receiver = await WebhookReceiver.start({ secret: SECRET });
  const written = writeGatewayConfig(dir, gatewayConfig(dir, smsc.address, { window: WINDOW, maxPerSecond: 5_000 }));
  configPath = written.path;
  databasePath = written.config.database.path;
  account = await seedAccount(written.config, { webhookUrl: receiver.url, webhookSecret: SECRET, senders: [{ name: 'Shop', type: 0 }] });
}, 120_000);

afterAll(async () => {
  for (const gateway of gateways) gateway.kill('SIGKILL');
  await receiver?.close();
  await smsc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('kill -9 in the middle of a 20,000-recipient campaign', () => {
  it('loses nothing: every recipient submitted, duplicates within the window, every receipt webhooked, summary adds up', async () => {
    const msisdns = Array.from({ length: RECIPIENTS }, (_, i) => `35386${String(i).padStart(7, '0')}`);
    const first = await GatewayProcess.spawn(configPath);
    gateways.push(first);
    const { status, id } = await postCampaign(first.baseUrl, account.token, {
      text: 'Flash sale today only',
      from: 'Shop',
      recipientInfo: msisdns.map((msisdn, i) => ({ msisdn, ClientReference: `c${i}` })),
    });
    expect(status).toBe(202);

    await until(() => smsc.submitCount, (n) => n >= RECIPIENTS / 4, 120_000, 'a quarter of the submits');
    first.kill('SIGKILL');
    expect((await first.waitForExit()).signal).toBe('SIGKILL');
    const submitsAtKill = smsc.submitCount;
    expect(submitsAtKill).toBeLessThan(RECIPIENTS);

    const second = await GatewayProcess.spawn(configPath);
    gateways.push(second);
    const summary = await until(() => getSummary(second.baseUrl, account.token, id), (s) => s !== undefined && s.pending === 0, 240_000, 'every recipient final');
    const undeliverable = msisdns.filter((m) => statusFor(m) === 'UNDELIV').length;
    expect(summary).toEqual({ totalSent: RECIPIENTS, delivered: RECIPIENTS - undeliverable, undelivered: undeliverable, pending: 0 });

    // Every recipient reached the SMSC at least once; re-sent ones are bounded by the window in flight at the kill.
    expect(smsc.submitsByDestination.size).toBe(RECIPIENTS);
    const duplicates = [...smsc.submitsByDestination.values()].reduce((sum, n) => sum + n - 1, 0);
    expect(duplicates).toBeLessThanOrEqual(WINDOW);

    // Every recipient's final receipt reached the receiver, signed; duplicates of a webhook are allowed (at-least-once).
    await expectFinalWebhooks(receiver, msisdns, { from: 'Shop', statusFor, timeoutMs: 120_000 });

    // A clean SIGTERM after all that exits 0.
    expect(await second.stop()).toBe(0);

    // What the restart left on disk: every part final, nothing in flight; the only unmatched
    // receipts are those for the ids of the submits re-sent after the kill (their first answer was
    // never written), kept pending until engine.unmatchedReceiptTtlMs.
    readDatabase(databasePath, (db) => {
      expect(db.prepare('SELECT state, COUNT(*) AS n FROM message_parts GROUP BY state ORDER BY state').all()).toEqual([
        { state: 'delivered', n: RECIPIENTS - undeliverable },
        { state: 'undelivered', n: undeliverable },
      ]);
      expect(db.prepare(`SELECT COUNT(*) AS n FROM receipts WHERE match_state <> 'matched'`).get()).toEqual({ n: duplicates });
      expect(db.prepare(`SELECT COUNT(*) AS n FROM receipts WHERE match_state = 'pending'`).get()).toEqual({ n: duplicates });
      expect(db.prepare(`SELECT COUNT(*) AS n FROM recipients WHERE dispatch_state <> 'dispatched'`).get()).toEqual({ n: 0 });
    });
  }, 600_000);
});
