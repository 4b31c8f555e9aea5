/**
 * Charges survive kill -9 (docs/behaviour/credits.md "Charges and releases"): a real `smsgate
 * serve` child on SQLite sends a priced, reserved campaign over real SMPP to a test SMSC that
 * refuses some numbers for good, is killed with SIGKILL in the middle, and restarts. Once every
 * part is final: the charges equal the distinct parts the SMSC accepted (counted at the SMSC; a
 * part re-sent after the kill is accepted twice there but charged once), everything else reserved
 * is released, and the client's balance and reserved equal the ledger's sums.
 *
 * The campaign is written into the database before the gateway starts (priced-campaign.ts), so the
 * test covers the engine's charges alone.
 */
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asyncPort } from '../../src/store/ports.js';
import { CampaignStore } from '../../src/store/sqlite/campaign-store.js';
import { SqliteCreditLedger } from '../../src/store/sqlite/credit-ledger.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { GatewayProcess, seedAccount, writeGatewayConfig } from '../support/gateway-process.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { gatewayConfig, tempDir, until } from './e2e-setup.js';
import { expectChargesMatchSmsc, seedPricedCampaign, unfinished, type PricedCampaign, type PricedCampaignDb } from './priced-campaign.js';

const RECIPIENTS = 4_000;
const WINDOW = 10;
const CREDITS_PER_PART = 2;
const TOP_UP = 100_000;
/** Numbers ending in 8 are refused at submit for good (ESME_RINVDSTADR); those in 9 accepted, then UNDELIV. */
const refused = (msisdn: string): boolean => msisdn.endsWith('8');
const msisdns = Array.from({ length: RECIPIENTS }, (_, i) => `35386${String(i).padStart(7, '0')}`);

let dir: string;
let smsc: ReceiptingSmsc;
let configPath: string;
let databasePath: string;
let campaign: PricedCampaign;
const gateways: GatewayProcess[] = [];

function sqliteDb(store: Store): PricedCampaignDb {
  const ledger = new SqliteCreditLedger(store.db);
  return {
    campaigns: asyncPort(new CampaignStore(store.db)),
    sql: async <T>(text: string, params: readonly unknown[]) => {
      const statement = store.db.prepare(text);
      if (statement.reader) return statement.all(...params) as T[];
      statement.run(...params);
      return [];
    },
    applyCredits: async (movements) => store.db.transaction(() => ledger.apply(movements, Date.now()))(),
  };
}

async function withDb<T>(use: (db: PricedCampaignDb) => Promise<T>): Promise<T> {
  const store = await openStore({ path: databasePath, synchronous: 'FULL' });
  try {
    return await use(sqliteDb(store));
  } finally {
    await store.close();
  }
}

/** A read-only look at the file while the gateway may be running (WAL lets it go on writing). */
async function reading<T>(use: (db: Pick<PricedCampaignDb, 'sql'>) => Promise<T>): Promise<T> {
  const db = new Database(databasePath, { readonly: true });
  try {
    return await use({ sql: async <R>(text: string, params: readonly unknown[]) => db.prepare(text).all(...params) as R[] });
  } finally {
    db.close();
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
  campaign = await withDb((db) => seedPricedCampaign(db, { username: account.username, msisdns, creditsPerPart: CREDITS_PER_PART, topUp: TOP_UP }));
}, 120_000);

afterAll(async () => {
  for (const gateway of gateways) gateway.kill('SIGKILL');
  await smsc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('kill -9 in the middle of a priced campaign over SMPP (SQLite)', () => {
  it('charges the distinct parts the SMSC accepted once, releases the rest, and the sums equal the ledger', async () => {
    const first = await GatewayProcess.spawn(configPath);
    gateways.push(first);
    await until(() => smsc.submitCount, (n) => n >= RECIPIENTS / 4, 120_000, 'a quarter of the submits');
    first.kill('SIGKILL');
    expect((await first.waitForExit()).signal).toBe('SIGKILL');
    expect(smsc.submitCount).toBeLessThan(RECIPIENTS);

    const second = await GatewayProcess.spawn(configPath);
    gateways.push(second);
    await until(() => reading((db) => unfinished(db, campaign.campaignId)), (n) => n === 0, 240_000, 'every part final');
    expect(await second.stop()).toBe(0);

    // Counted at the SMSC: every number reached it; the refused ones were never accepted.
    expect(smsc.submitsByDestination.size).toBe(RECIPIENTS);
    expect(smsc.acceptedByDestination.size).toBe(RECIPIENTS - msisdns.filter(refused).length);
    const acceptedTwice = await reading((db) => expectChargesMatchSmsc(db, smsc, campaign, CREDITS_PER_PART, TOP_UP));
    // Re-sent after the kill (their first answer never written): at most the window.
    expect(acceptedTwice).toBeLessThanOrEqual(WINDOW);
    console.log(`credits kill (SQLite): ${smsc.submitCount} submits, ${smsc.acceptedByDestination.size} parts accepted, ${acceptedTwice} of them twice, charged once`);
  }, 600_000);
});
