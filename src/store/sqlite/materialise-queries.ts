/**
 * The store side of materialising on SQLite (MaterialiseStepStore<'sync'> in
 * src/engine/steps/materialise.ts): prepared statements, run inside the caller's db.transaction
 * (nothing else writes between the reads and the write of one pass). Multi-row statements where a
 * pass writes many rows of one kind.
 */
import type { DeliveryReceiptEvent, ReadyCampaign, DueRecipient, MaterialiseWrite, MaterialiseWritten, RecipientShare } from '../dispatch-steps.js';
import { SqliteCreditLedger } from './credit-ledger.js';
import type { SqliteDatabase } from './database.js';
import { BATCH_SQL, CLOSE_CAMPAIGNS_SQL } from './dispatch-store.js';
import { SqlitePartInserts } from './part-inserts.js';


export const MATERIALISE_SQL = {
  /**
   * Ready campaigns not yet dispatched, earliest send time first (the campaigns_state index), each
   * with its waiting recipients counted up to @cap (the recipients_dispatch index, no row read);
   * not counted before its send time (@now): those are not due, so not read further.
   */
  readyCampaigns: `SELECT c.id, c.client_id, c.sender, c.text, c.text_sent, c.smpp_submit, c.send_at,
      CASE WHEN COALESCE(c.send_at, 0) <= @now
        THEN (SELECT COUNT(*) FROM (SELECT 1 FROM recipients r WHERE r.campaign_id = c.id AND r.dispatch_state = 'waiting' LIMIT @cap))
        ELSE 0 END AS waiting
    FROM campaigns c
    WHERE c.state = 'ready' AND c.dispatched_at IS NULL
    ORDER BY COALESCE(c.send_at, 0), c.created_at LIMIT @limit`,
  waitingRecipients: `SELECT r.id, r.campaign_id, r.msisdn, r.status, r.last_status, r.client_reference, c.client_id, cl.name AS client_name, c.sender, cl.webhook_url,
      r.credits_per_part
    FROM recipients r JOIN campaigns c ON c.id = r.campaign_id JOIN clients cl ON cl.id = c.client_id
    WHERE r.campaign_id = ? AND r.dispatch_state = 'waiting' ORDER BY r.id LIMIT ?`,
  /** Statuses of many recipients from a JSON array of [id, status, last_status]. */
  recipientStatuses: `UPDATE recipients SET status = u.status, last_status = u.last_status, updated_at = @now
    FROM (SELECT value ->> 0 AS id, value ->> 1 AS status, value ->> 2 AS last_status FROM json_each(@rows)) AS u
    WHERE recipients.id = u.id`,
} as const;

/** Queues Delivery Receipts inside the caller's transaction (the webhook outbox's sink). */
export type EnqueueDeliveryReceipts = (rows: readonly DeliveryReceiptEvent[], nowMs: number) => void;

export class SqliteMaterialiseStore {
  private readonly s;
  private readonly parts: SqlitePartInserts;
  private readonly credits: SqliteCreditLedger;

  constructor(
    db: SqliteDatabase,
    private readonly enqueueReceipts: EnqueueDeliveryReceipts,
  ) {
    this.parts = new SqlitePartInserts(db);
    this.credits = new SqliteCreditLedger(db);
    this.s = {
      readyCampaigns: db.prepare<[{ now: number; limit: number; cap: number }], ReadyCampaign>(MATERIALISE_SQL.readyCampaigns),
      waitingRecipients: db.prepare<[string, number], DueRecipient>(MATERIALISE_SQL.waitingRecipients),
      markDispatched: db.prepare<[number, string], unknown>(BATCH_SQL.markRecipientsDispatched),
      recipientStatuses: db.prepare<[{ now: number; rows: string }], unknown>(MATERIALISE_SQL.recipientStatuses),
      closeCampaigns: db.prepare<[{ now: number; ids: string }], string>(CLOSE_CAMPAIGNS_SQL).pluck(),
    };
  }

  readReadyCampaigns(nowMs: number, limit: number, cap: number): ReadyCampaign[] {
    return this.s.readyCampaigns.all({ now: nowMs, limit, cap });
  }

  takeRecipients(shares: readonly RecipientShare[]): DueRecipient[] {
    return shares.flatMap((share) => this.s.waitingRecipients.all(share.campaignId, share.take));
  }

  writeMaterialise(plan: MaterialiseWrite): MaterialiseWritten {
    const { nowMs } = plan;
    this.parts.insert(plan.parts, nowMs);
    if (plan.dispatched.length > 0) this.s.markDispatched.run(nowMs, JSON.stringify(plan.dispatched));
    if (plan.statuses.length > 0) {
      this.s.recipientStatuses.run({ now: nowMs, rows: JSON.stringify(plan.statuses.map((s) => [s.recipientId, s.status, s.lastStatus])) });
    }
    if (plan.webhooks.length > 0) this.enqueueReceipts(plan.webhooks, nowMs);
    this.credits.apply(plan.credits, nowMs);
    const closedCampaigns = plan.closeCampaigns.length === 0 ? [] : this.s.closeCampaigns.all({ now: nowMs, ids: JSON.stringify(plan.closeCampaigns) });
    return { closedCampaigns, webhooksQueued: plan.webhooks.length };
  }
}
