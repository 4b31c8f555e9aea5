/**
 * A priced, reserved campaign for the end-to-end charge tests, written into a gateway's database
 * before it starts: ready, its recipients priced (recipients.credits_per_part) and its most it can
 * cost reserved through the ledger writer, as accepting and processing a priced campaign leaves
 * it; and the check that the charges match what the SMSC accepted. The same on SQLite and on
 * PostgreSQL: the store ports, plain SQL and the backend's ledger writer are passed in.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { CreditMovement } from '../../src/accounts/credits.js';
import { planMessage } from '../../src/sms/index.js';
import type { StorePorts } from '../../src/store/store-ports.js';
import type { ReceiptingSmsc } from '../support/receipting-smsc.js';

export interface PricedCampaignDb {
  campaigns: StorePorts['campaigns'];
  /** `?` placeholders. */
  sql<T>(text: string, params: readonly unknown[]): Promise<T[]>;
  applyCredits(movements: readonly CreditMovement[]): Promise<void>;
}

export interface PricedCampaign {
  clientId: number;
  campaignId: string;
  reserved: number;
}

export async function seedPricedCampaign(db: PricedCampaignDb, seed: {
  username: string; msisdns: readonly string[]; creditsPerPart: number; topUp: number;
}): Promise<PricedCampaign> {
  const [user] = await db.sql<{ id: number; client_id: number }>('SELECT id, client_id FROM users WHERE username = ?', [seed.username]);
  if (user === undefined) throw new Error(`no user ${seed.username}`);
  const clientId = Number(user.client_id);
  const campaignId = randomUUID();
  const text = 'Flash sale today only';
  const plan = planMessage(text);
  const nowMs = Date.now();
  const reserved = seed.msisdns.length * plan.parts * seed.creditsPerPart;
  await db.applyCredits([{ clientId, kind: 'top-up', credits: seed.topUp, campaignId: null, note: 'test' }]);
  await db.campaigns.insertCampaign({
    id: campaignId, clientId, userId: Number(user.id), state: 'queued', name: 'priced', sender: 'Shop', text, sendAtLocal: null,
    createAsDraft: false, shouldSaveList: false, requestRecipientsJson: '[]', createdAtMs: nowMs,
  });
  await db.campaigns.claimForProcessing(campaignId);
  await db.campaigns.appendRecipients(campaignId, seed.msisdns.map((msisdn) => ({ msisdn, clientReference: null })), nowMs);
  await db.sql('UPDATE recipients SET credits_per_part = ? WHERE campaign_id = ?', [seed.creditsPerPart, campaignId]);
  await db.sql('UPDATE campaigns SET credits_reserved = ? WHERE id = ?', [reserved, campaignId]);
  await db.applyCredits([{ clientId, kind: 'reserve', credits: reserved, campaignId, note: null }]);
  // Ready last: the gateway is not running yet, but a ready campaign is one the engine sends.
  await db.campaigns.markReady({
    campaignId, totalSent: seed.msisdns.length, textSent: plan.text, encoding: plan.encoding, partsPerMessage: plan.parts, sendAtMs: nowMs,
    skippedCount: 0, readyAtMs: nowMs,
  });
  return { clientId, campaignId, reserved };
}

/** Parts not final plus recipients still waiting: 0 once the campaign has run to its end. */
export async function unfinished(db: Pick<PricedCampaignDb, 'sql'>, campaignId: string): Promise<number> {
  const [parts] = await db.sql<{ n: number }>(`SELECT COUNT(*) AS n FROM message_parts WHERE campaign_id = ? AND state NOT IN ('delivered', 'undelivered')`, [campaignId]);
  const [waiting] = await db.sql<{ n: number }>(`SELECT COUNT(*) AS n FROM recipients WHERE campaign_id = ? AND dispatch_state = 'waiting'`, [campaignId]);
  return Number(parts?.n) + Number(waiting?.n);
}

/**
 * One-part messages to distinct numbers, the campaign run to its end: the charges equal the
 * distinct parts the SMSC accepted (a part accepted twice, re-sent after a kill, charged once),
 * all that was reserved is released, and the client's sums equal the ledger's. Returns how many
 * parts the SMSC accepted more than once.
 */
export async function expectChargesMatchSmsc(db: Pick<PricedCampaignDb, 'sql'>, smsc: ReceiptingSmsc, campaign: PricedCampaign, creditsPerPart: number, topUp: number): Promise<number> {
  const rows = await db.sql<{ kind: string; credits: number; campaign_id: string | null }>('SELECT kind, credits, campaign_id FROM credit_ledger WHERE client_id = ?', [campaign.clientId]);
  const byKind: Record<string, number> = {};
  const ledger = { balance: 0, reserved: 0 };
  for (const r of rows) {
    const credits = Number(r.credits);
    if (r.campaign_id === campaign.campaignId) byKind[r.kind] = (byKind[r.kind] ?? 0) + credits;
    if (r.kind === 'reserve' || r.kind === 'release') ledger.reserved += credits;
    else ledger.balance += credits;
  }
  const charged = smsc.acceptedByDestination.size * creditsPerPart;
  expect(byKind).toEqual({ reserve: campaign.reserved, release: -campaign.reserved, charge: -charged });
  const [account] = await db.sql<{ balance: number; reserved: number }>('SELECT balance, reserved FROM client_credits WHERE client_id = ?', [campaign.clientId]);
  expect({ balance: Number(account?.balance), reserved: Number(account?.reserved) }).toEqual({ balance: topUp - charged, reserved: 0 });
  expect(ledger).toEqual({ balance: topUp - charged, reserved: 0 });
  const [mispriced] = await db.sql<{ n: number }>('SELECT COUNT(*) AS n FROM message_parts WHERE campaign_id = ? AND credits <> ?', [campaign.campaignId, creditsPerPart]);
  expect(Number(mispriced?.n)).toBe(0);
  return [...smsc.acceptedByDestination.values()].reduce((n, k) => n + k - 1, 0);
}
