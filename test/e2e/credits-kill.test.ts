/**
 * Charges survive kill -9 (docs/behaviour/credits.md "Charges and releases"): a real `smsgate
 * serve` child sends a priced, reserved campaign over real SMPP to a test SMSC that refuses some
 * numbers for good, is killed with SIGKILL in the middle, and restarts. Once every part is final:
 * the charges equal the distinct parts the SMSC accepted (counted at the SMSC; a part re-sent after
 * the kill is accepted twice there but charged once), everything else reserved is released, and the
 * client's balance and reserved equal the ledger's sums.
 *
 * The campaign is written into the database before the gateway starts, priced and reserved as
 * accepting and processing a priced campaign leaves it (recipients.credits_per_part, a reserve row
 * through the ledger writer), so the test covers the engine's charges alone.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planMessage } from '../../src/sms/index.js';
import { CampaignStore } from '../../src/store/sqlite/campaign-store.js';
import { SqliteCreditLedger } from '../../src/store/sqlite/credit-ledger.js';
import { openStore } from '../../src/store/sqlite/database.js';
import { GatewayProcess, seedAccount, writeGatewayConfig } from '../support/gateway-process.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { gatewayConfig, readDatabase, tempDir, until } from './e2e-setup.js';

const RECIPIENTS = 4_000;
const WINDOW = 10;
const CREDITS_PER_PART = 2;
const TOP_UP = 100_000;
/** Numbers ending in 8 are refused at submit for good (ESME_RINVDSTADR); those in 9 accepted, then UNDELIV. */
const refused = (msisdn: string): boolean => msisdn.endsWith('8');

let dir: string;
let smsc: ReceiptingSmsc;
let configPath: string;
let databasePath: string;
let clientId: number;
let campaignId: string;
const gateways: GatewayProcess[] = [];
const msisdns = Array.from({ length: RECIPIENTS }, (_, i) => `35386${String(i).padStart(7, '0')}`);

/** A ready campaign, priced and reserved, written into the gateway's file before it starts. */
async function seedPricedCampaign(path: string, username: string): Promise<{ clientId: number; campaignId: string }> {
  const store = await openStore({ path, synchronous: 'FULL' });
  try {
    const { db } = store;
    const user = db.prepare('SELECT id, client_id FROM users WHERE username = ?').get(username) as { id: number; client_id: number };
    const id = randomUUID();
    const text = 'Flash sale today only';
    const plan = planMessage(text);
    const nowMs = Date.now();
    const campaigns = new CampaignStore(db);
    const ledger = new SqliteCreditLedger(db);
    db.transaction(() => {
      ledger.apply([{ clientId: user.client_id, kind: 'top-up', credits: TOP_UP, campaignId: null, note: 'test' }], nowMs);
      campaigns.insertCampaign({
        id, clientId: user.client_id, userId: user.id, state: 'queued', name: 'priced', sender: 'Shop', text, sendAtLocal: null,
        createAsDraft: false, shouldSaveList: false, requestRecipientsJson: '[]', createdAtMs: nowMs,
      });
      campaigns.claimForProcessing(id);
      campaigns.appendRecipients(id, msisdns.map((msisdn) => ({ msisdn, clientReference: null })), nowMs);
      const reserved = RECIPIENTS * plan.parts * CREDITS_PER_PART;
      db.prepare('UPDATE recipients SET credits_per_part = ? WHERE campaign_id = ?').run(CREDITS_PER_PART, id);
      db.prepare('UPDATE campaigns SET credits_reserved = ? WHERE id = ?').run(reserved, id);
      ledger.apply([{ clientId: user.client_id, kind: 'reserve', credits: reserved, campaignId: id, note: null }], nowMs);
      campaigns.markReady({
        campaignId: id, totalSent: RECIPIENTS, textSent: plan.text, encoding: plan.encoding, partsPerMessage: plan.parts, sendAtMs: nowMs, skippedCount: 0,
        readyAtMs: nowMs,
      });
    })();
    return { clientId: user.client_id, campaignId: id };
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  dir = tempDir('credits-kill');
  smsc = await ReceiptingSmsc.start({
    submitStatusFor: (destination) => (refused(destination) ? 0x0b : 0),
    statusFor: (destination) => (destination.endsWith('9') ? 'UNDELIV' : 'DELIVRD'),
  });
  const written = writeGatewayConfig(dir, gatewayConfig(dir, smsc.address, { window: WINDOW, maxPerSecond: 2_000 }));
  configPath = written.path;
  databasePath = written.config.database.path;
  const account = await seedAccount(written.config, { senders: [{ name: 'Shop', type: 0 }] });
  ({ clientId, campaignId } = await seedPricedCampaign(databasePath, account.username));
}, 120_000);

afterAll(async () => {
  for (const gateway of gateways) gateway.kill('SIGKILL');
  await smsc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('kill -9 in the middle of a priced campaign over SMPP', () => {
  it('charges the distinct parts the SMSC accepted once, releases the rest, and the sums equal the ledger', async () => {
    const first = await GatewayProcess.spawn(configPath);
    gateways.push(first);
    await until(() => smsc.submitCount, (n) => n >= RECIPIENTS / 4, 120_000, 'a quarter of the submits');
    first.kill('SIGKILL');
    expect((await first.waitForExit()).signal).toBe('SIGKILL');
    expect(smsc.submitCount).toBeLessThan(RECIPIENTS);

    const second = await GatewayProcess.spawn(configPath);
    gateways.push(second);
    const pending = (): number => readDatabase(databasePath, (db) =>
      (db.prepare(`SELECT COUNT(*) AS n FROM message_parts WHERE state NOT IN ('delivered', 'undelivered')`).get() as { n: number }).n
      + (db.prepare(`SELECT COUNT(*) AS n FROM recipients WHERE dispatch_state = 'waiting'`).get() as { n: number }).n);
    await until(pending, (n) => n === 0, 240_000, 'every part final');
    expect(await second.stop()).toBe(0);

    // Counted at the SMSC: every number reached it; the refused ones were never accepted; a part
    // accepted twice was re-sent after the kill (its first answer never written): at most the window.
    const refusedCount = msisdns.filter(refused).length;
    expect(smsc.submitsByDestination.size).toBe(RECIPIENTS);
    expect(smsc.acceptedByDestination.size).toBe(RECIPIENTS - refusedCount);
    const acceptedTwice = [...smsc.acceptedByDestination.values()].reduce((n, k) => n + k - 1, 0);
    expect(acceptedTwice).toBeLessThanOrEqual(WINDOW);

    readDatabase(databasePath, (db) => {
      const byKind = Object.fromEntries((db.prepare('SELECT kind, SUM(credits) AS credits FROM credit_ledger WHERE campaign_id = ? GROUP BY kind ORDER BY kind')
        .all(campaignId) as { kind: string; credits: number }[]).map((r) => [r.kind, r.credits]));
      const reserved = RECIPIENTS * CREDITS_PER_PART;
      // One-part messages: a part per number; charged once however often the SMSC accepted it.
      const charged = smsc.acceptedByDestination.size * CREDITS_PER_PART;
      expect(byKind).toEqual({ charge: -charged, release: -reserved, reserve: reserved });
      const ledger = db.prepare(`SELECT
          SUM(CASE WHEN kind IN ('top-up', 'correction', 'charge') THEN credits ELSE 0 END) AS balance,
          SUM(CASE WHEN kind IN ('reserve', 'release') THEN credits ELSE 0 END) AS reserved
        FROM credit_ledger WHERE client_id = ?`).get(clientId);
      const account = db.prepare('SELECT balance, reserved FROM client_credits WHERE client_id = ?').get(clientId);
      expect(account).toEqual({ balance: TOP_UP - charged, reserved: 0 });
      expect(ledger).toEqual(account);
      expect(db.prepare(`SELECT COUNT(*) AS n FROM message_parts WHERE credits <> ?`).get(CREDITS_PER_PART)).toEqual({ n: 0 });
    });
  }, 600_000);
});
