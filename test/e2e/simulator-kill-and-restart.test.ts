/**
 * Crash safety on the embedded default: a real `smsgate serve` child process sending a campaign
 * through the simulator transport is killed with SIGKILL while receipts are still waiting inside
 * the simulator (in process memory, so lost with it). After a restart the engine hands the ids of
 * parts still 'submitted' back to the simulator, which re-issues their receipts from the ids
 * (src/transports/simulator/message-id.ts): every recipient ends delivered or undelivered, the
 * summary has nothing pending, and every recipient's final status reached the webhook receiver.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIMULATOR_DEMO_OUTCOMES } from '../../src/transports/simulator/index.js';
import { GatewayProcess, seedAccount, writeGatewayConfig, type SeededAccount } from '../support/gateway-process.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { getSummary, lastBodyByTo, postCampaign, readDatabase, tempDir, until } from './e2e-setup.js';

const RECIPIENTS = 5_000;
const SECRET = 'simulator-crash-secret';
/** The demo table: ...9 UNDELIV receipt, ...8 REJECTD at submit, ...7 throttled once then DELIVRD. */
const statusFor = (msisdn: string): string => (msisdn.endsWith('9') ? 'UNDELIV' : msisdn.endsWith('8') ? 'REJECTD' : 'DELIVRD');

let dir: string;
let receiver: WebhookReceiver;
let configPath: string;
let databasePath: string;
let account: SeededAccount;
const gateways: GatewayProcess[] = [];

beforeAll(async () => {
  dir = tempDir('sim-crash');
  receiver = await WebhookReceiver.start({ secret: SECRET });
  const written = writeGatewayConfig(dir, {
    database: { path: join(dir, 'smsgate.sqlite') },
    api: { host: '127.0.0.1', port: 0 },
    logging: { level: 'info' },
    engine: { pollIntervalMs: 50, retryBaseDelayMs: 200, drainTimeoutMs: 2_000 },
    processing: { pollIntervalMs: 50 },
    webhooks: { retryDelaysMs: [200, 400, 800] },
    // Receipts 2 s after submit at 2,000 parts/s: thousands wait in the simulator at any moment.
    transports: [{ name: 'sim', type: 'simulator', maxPerSecond: 2_000, window: 50, receiptDelayMs: 2_000, outcomes: SIMULATOR_DEMO_OUTCOMES }],
    routes: [{ prefix: '', transport: 'sim' }],
  });
  configPath = written.path;
  databasePath = written.config.database.path;
  account = await seedAccount(written.config, { webhookUrl: receiver.url, webhookSecret: SECRET, senders: [{ name: 'Shop', type: 0 }] });
}, 120_000);

afterAll(async () => {
  for (const gateway of gateways) gateway.kill('SIGKILL');
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

function submittedParts(): number {
  return readDatabase(databasePath, (db) => (db.prepare(`SELECT COUNT(*) AS n FROM message_parts WHERE state = 'submitted'`).get() as { n: number }).n);
}

describe('kill -9 of a gateway on the simulator with receipts outstanding', () => {
  it('re-issues the lost receipts after the restart: nothing pending, one webhook per recipient at least', async () => {
    const msisdns = Array.from({ length: RECIPIENTS }, (_, i) => `35387${String(i).padStart(7, '0')}`);
    const first = await GatewayProcess.spawn(configPath);
    gateways.push(first);
    const { status, id } = await postCampaign(first.baseUrl, account.token, {
      text: 'Simulated sale',
      from: 'Shop',
      recipientInfo: msisdns.map((msisdn, i) => ({ msisdn, ClientReference: `s${i}` })),
    });
    expect(status).toBe(202);

    // Kill once a good number of parts sit 'submitted' (their receipts only in the simulator's memory).
    await until(submittedParts, (n) => n >= 1_000, 120_000, 'parts submitted and waiting for receipts');
    first.kill('SIGKILL');
    expect((await first.waitForExit()).signal).toBe('SIGKILL');
    const waitingAtKill = submittedParts();
    expect(waitingAtKill).toBeGreaterThan(0);

    const second = await GatewayProcess.spawn(configPath);
    gateways.push(second);
    const summary = await until(() => getSummary(second.baseUrl, account.token, id), (s) => s !== undefined && s.pending === 0, 240_000, 'every recipient final');
    const undelivered = msisdns.filter((m) => statusFor(m) !== 'DELIVRD').length;
    expect(summary).toEqual({ totalSent: RECIPIENTS, delivered: RECIPIENTS - undelivered, undelivered, pending: 0 });
    expect(second.logLines.some((line) => line.includes('re-issues receipts'))).toBe(true);

    // Every recipient's final status reached the receiver, signed (duplicates allowed: at-least-once).
    await receiver.waitUntil(() => new Set((receiver.bodies() as { To: string }[]).map((b) => b.To)).size >= RECIPIENTS, 120_000, 'a webhook for every recipient');
    expect(receiver.signatureFailures).toBe(0);
    const finalByTo = lastBodyByTo(receiver.bodies() as { To: string }[]);
    msisdns.forEach((msisdn, i) => {
      expect(finalByTo.get(msisdn)).toEqual({ To: msisdn, From: 'Shop', Status: statusFor(msisdn), ClientReference: `s${i}` });
    });

    expect(await second.stop()).toBe(0);
    readDatabase(databasePath, (db) => {
      expect(db.prepare(`SELECT COUNT(*) AS n FROM message_parts WHERE state NOT IN ('delivered', 'undelivered')`).get()).toEqual({ n: 0 });
    });
  }, 600_000);
});
