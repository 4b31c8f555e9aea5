/**
 * Charges survive kill -9 on PostgreSQL (docs/behaviour/credits.md "Charges and releases"): a real
 * `smsgate serve` node on a throwaway PostgreSQL sends a priced, reserved campaign over real SMPP
 * to a test SMSC that refuses some numbers for good, is killed with SIGKILL in the middle, and a
 * new node starts. Once the killed node's lease has run out its in-flight parts are taken over and
 * sent again, and every part is final: the charges equal the distinct parts the SMSC accepted (a
 * part accepted twice charged once), everything else reserved is released, and the client's
 * balance and reserved equal the ledger's sums.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { applyCreditMovements } from '../../src/store/postgres/credit-ledger.js';
import { inTransaction } from '../../src/store/postgres/pool.js';
import { createPgStores } from '../../src/store/postgres/stores.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { until } from './e2e-setup.js';
import { usePgServePeers } from './pg-serve-setup.js';
import { expectChargesMatchSmsc, seedPricedCampaign, unfinished, type PricedCampaignDb } from './priced-campaign.js';

const RECIPIENTS = 4_000;
const WINDOW = 10;
const CREDITS_PER_PART = 3;
const TOP_UP = 100_000;
/** Numbers ending in 8 are refused at submit for good (ESME_RINVDSTADR); those in 9 accepted, then UNDELIV. */
const refused = (msisdn: string): boolean => msisdn.endsWith('8');
const msisdns = Array.from({ length: RECIPIENTS }, (_, i) => `35386${String(i).padStart(7, '0')}`);

const peers = usePgServePeers('credits-kill-pg', {
  webhookSecret: 'credits-kill-secret',
  startSmsc: () => ReceiptingSmsc.start({
    submitStatusFor: (destination) => (refused(destination) ? 0x0b : 0),
    statusFor: (destination) => (destination.endsWith('9') ? 'UNDELIV' : 'DELIVRD'),
  }),
  transport: { window: WINDOW, maxPerSecond: 2_000 },
});

/** `?` -> `$1`, `$2`, ... */
function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

async function withDb<T>(use: (db: PricedCampaignDb) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: peers().url, max: 2 });
  try {
    return await use({
      campaigns: createPgStores(pool).campaigns,
      sql: async <R>(text: string, params: readonly unknown[]) => (await pool.query(numbered(text), [...params])).rows as R[],
      applyCredits: (movements) => inTransaction(pool, (client) => applyCreditMovements(client, movements, Date.now())),
    });
  } finally {
    await pool.end();
  }
}

describe('kill -9 in the middle of a priced campaign over SMPP (PostgreSQL)', () => {
  it('charges the distinct parts the SMSC accepted once, releases the rest, and the sums equal the ledger', async () => {
    const { smsc } = peers();
    const campaign = await withDb((db) => seedPricedCampaign(db, { username: 'acme-admin', msisdns, creditsPerPart: CREDITS_PER_PART, topUp: TOP_UP }));
    const first = await peers().spawn();
    await until(() => smsc.submitCount, (n) => n >= RECIPIENTS / 4, 120_000, 'a quarter of the submits');
    first.kill('SIGKILL');
    expect((await first.waitForExit()).signal).toBe('SIGKILL');
    expect(smsc.submitCount).toBeLessThan(RECIPIENTS);

    const second = await peers().spawn();
    await until(() => withDb((db) => unfinished(db, campaign.campaignId)), (n) => n === 0, 240_000, 'every part final');
    expect(await second.stop()).toBe(0);

    expect(smsc.submitsByDestination.size).toBe(RECIPIENTS);
    expect(smsc.acceptedByDestination.size).toBe(RECIPIENTS - msisdns.filter(refused).length);
    const acceptedTwice = await withDb((db) => expectChargesMatchSmsc(db, smsc, campaign, CREDITS_PER_PART, TOP_UP));
    // Re-sent after the takeover (their first answer never written): at most binds (1) x window.
    expect(acceptedTwice).toBeLessThanOrEqual(WINDOW);
    console.log(`credits kill (PostgreSQL): ${smsc.submitCount} submits, ${smsc.acceptedByDestination.size} parts accepted, ${acceptedTwice} of them twice, charged once`);
  }, 600_000);
});
