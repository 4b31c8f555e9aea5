/**
 * The dispatch engine's SQL: prepared statements on the raw better-sqlite3 handle, because these
 * run once or more per message part (TypeORM costs several times more per row). Every method is
 * synchronous and short; callers group them in db.transaction(...) for multi-row work.
 */
import type { DueCampaign, NewPart } from '../dispatch-steps.js';
import type { RecipientRow } from '../part-change-rows.js';

export type { DueCampaign } from '../dispatch-steps.js';
import type { PartState, RecipientStatus } from '../entities.js';
import type { SqliteDatabase } from './database.js';
import { MultiRowInsert } from './multi-row-insert.js';
import { SqlitePartWrites } from './part-writes.js';
import { PART_INSERT_COLUMNS, SqlitePartInserts } from './part-inserts.js';
import { SqliteRecoveryStore } from './recovery-queries.js';

export interface WaitingRecipient {
  id: number;
  msisdn: string;
}

/** A queued part joined with what a submit needs, as claimed by a transport lane. */
export interface ClaimablePart {
  id: number;
  recipient_id: number;
  campaign_id: string;
  part_number: number;
  parts_total: number;
  concat_reference: number;
  attempts: number;
  msisdn: string;
}

export interface PartForReceipt {
  id: number;
  recipient_id: number;
  state: PartState;
}

export interface PendingReceipt {
  id: number;
  status: string;
  final: number;
  error_code: string | null;
}

/** A recipient with what its Delivery Receipt needs (the part-change steps' recipient row). */
export type RecipientContext = RecipientRow;

export interface PartStatusRow {
  part_number: number;
  state: PartState;
  last_status: string | null;
  final_at: number | null;
}

export interface ExpiredReceipt {
  id: number;
  transport: string;
  message_id: string;
  status: string;
  received_at: number;
}

export interface ReceiptInsert {
  transport: string;
  messageId: string;
  status: string;
  final: boolean;
  errorCode: string | null;
  doneAt: string | null;
  raw: string;
  receivedAt: number;
  matchState: 'matched' | 'pending';
  partId: number | null;
}

/**
 * The claim statements, exported so test/engine/claim-index.test.ts checks the query plan of the
 * very text the store runs. Both are served by message_parts_fair_claim
 * (transport, state, campaign_id, next_attempt_at): see that migration.
 */
export const CLAIM_SQL = {
  /**
   * Up to @limit campaigns with queued parts on @transport, in campaign id order after @after ('' for
   * the start): a recursive skip-scan, one index seek per campaign however many parts each has.
   * A campaign whose parts all wait for a later retry is listed too; its claim just finds none.
   */
  queuedCampaigns: `WITH RECURSIVE next(campaign_id, n) AS (
      SELECT (SELECT MIN(campaign_id) FROM message_parts WHERE transport = @transport AND state = 'queued' AND campaign_id > @after), 1
      UNION ALL
      SELECT (SELECT MIN(campaign_id) FROM message_parts WHERE transport = @transport AND state = 'queued' AND campaign_id > next.campaign_id), n + 1
      FROM next WHERE next.campaign_id IS NOT NULL AND n < @limit
    )
    SELECT campaign_id FROM next WHERE campaign_id IS NOT NULL`,
  /** One campaign's due parts on a transport, oldest due first. */
  claimableInCampaign: `SELECT p.id, p.recipient_id, p.campaign_id, p.part_number, p.parts_total, p.concat_reference, p.attempts, r.msisdn
    FROM message_parts p JOIN recipients r ON r.id = p.recipient_id
    WHERE p.state = 'queued' AND p.transport = ? AND p.campaign_id = ? AND p.next_attempt_at <= ?
    ORDER BY p.next_attempt_at, p.id LIMIT ?`,
} as const;

/**
 * Statements that change many rows named by id (a JSON array): exported so
 * test/engine/claim-index.test.ts checks their plans. The '+' before the state column keeps the
 * planner from walking a state index over every queued part (or waiting recipient) and filtering
 * by the ids: each id is one rowid lookup.
 */
export const BATCH_SQL = {
  markManySubmitting: `UPDATE message_parts SET state = 'submitting', updated_at = ?
    WHERE id IN (SELECT value FROM json_each(?)) AND +state = 'queued' RETURNING id`,
  markRecipientsDispatched: `UPDATE recipients SET dispatch_state = 'dispatched', updated_at = ?
    WHERE id IN (SELECT value FROM json_each(?)) AND +dispatch_state = 'waiting'`,
} as const;

/**
 * Marks the campaigns named in @ids (a JSON array) dispatched unless one of their recipients still
 * waits; returns those it marked (materialising closes the campaigns it emptied).
 */
export const CLOSE_CAMPAIGNS_SQL = `UPDATE campaigns SET dispatched_at = @now
    WHERE id IN (SELECT value FROM json_each(@ids)) AND dispatched_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM recipients WHERE campaign_id = campaigns.id AND dispatch_state = 'waiting')
    RETURNING id`;


const RECEIPT_INSERT_COLUMNS = '(transport, message_id, status, final, error_code, done_at, raw, received_at, match_state, part_id)';

export class DispatchStore {
  private readonly s;
  private readonly receiptInserts: MultiRowInsert<ReceiptInsert>;
  /** The batch updates of parts and recipients, shared with the engine's step stores on this connection. */
  readonly partWrites: SqlitePartWrites;

  private readonly recovery: SqliteRecoveryStore;
  private readonly partInserts: SqlitePartInserts;

  constructor(readonly db: SqliteDatabase) {
    this.recovery = new SqliteRecoveryStore(db);
    this.partInserts = new SqlitePartInserts(db);
    this.receiptInserts = new MultiRowInsert(db, `INSERT INTO receipts ${RECEIPT_INSERT_COLUMNS} VALUES`, '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', (r) =>
      [r.transport, r.messageId, r.status, r.final ? 1 : 0, r.errorCode, r.doneAt, r.raw, r.receivedAt, r.matchState, r.partId]);
    this.partWrites = new SqlitePartWrites(db);
    this.s = {
      dueCampaigns: db.prepare<[number, number], DueCampaign>(
        `SELECT id, client_id, sender, text, text_sent, smpp_submit FROM campaigns
         WHERE state = 'ready' AND dispatched_at IS NULL AND COALESCE(send_at, 0) <= ?
         ORDER BY send_at, created_at LIMIT ?`,
      ),
      waitingRecipients: db.prepare<[string, number], WaitingRecipient>(
        `SELECT id, msisdn FROM recipients WHERE campaign_id = ? AND dispatch_state = 'waiting' ORDER BY id LIMIT ?`,
      ),
      insertPart: db.prepare<[number, string, number, number, number, string | null, string, string | null, number, number | null, number, number], unknown>(
        `INSERT INTO message_parts ${PART_INSERT_COLUMNS}
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      markRecipientsDispatched: db.prepare<[number, string], unknown>(BATCH_SQL.markRecipientsDispatched),
      campaignTexts: db.prepare<[string], DueCampaign>(
        `SELECT id, client_id, sender, text, text_sent, smpp_submit FROM campaigns WHERE id IN (SELECT value FROM json_each(?))`,
      ),
      markRecipientDispatched: db.prepare<[number, number], unknown>(
        `UPDATE recipients SET dispatch_state = 'dispatched', updated_at = ? WHERE id = ? AND dispatch_state = 'waiting'`,
      ),
      closeCampaigns: db.prepare<[{ now: number; ids: string }], string>(CLOSE_CAMPAIGNS_SQL).pluck(),
      queuedCampaigns: db
        .prepare<[{ transport: string; after: string; limit: number }], string>(CLAIM_SQL.queuedCampaigns)
        .pluck(),
      claimableInCampaign: db.prepare<[string, string, number, number], ClaimablePart>(CLAIM_SQL.claimableInCampaign),
      markManySubmitting: db.prepare<[number, string], number>(BATCH_SQL.markManySubmitting).pluck(),
      markSubmitting: db.prepare<[number, number], unknown>(
        `UPDATE message_parts SET state = 'submitting', updated_at = ? WHERE id = ? AND state = 'queued'`,
      ),
      requeue: db.prepare<[number, number, string | null, string | null, number, number], unknown>(
        `UPDATE message_parts SET state = 'queued', attempts = ?, next_attempt_at = ?, last_status = ?, last_error_code = ?,
           updated_at = ? WHERE id = ? AND state = 'submitting'`,
      ),
      failPart: db.prepare<[number, string, string | null, number, number, number], unknown>(
        `UPDATE message_parts SET state = 'undelivered', attempts = ?, last_status = ?, last_error_code = ?, final_at = ?,
           updated_at = ? WHERE id = ? AND state = 'submitting'`,
      ),
      partByMessageId: db.prepare<[string, string], PartForReceipt>(
        `SELECT id, recipient_id, state FROM message_parts WHERE transport = ? AND message_id = ? ORDER BY id DESC LIMIT 1`,
      ),
      notePartStatus: db.prepare<[string, number, number], unknown>(
        `UPDATE message_parts SET last_status = ?, updated_at = ? WHERE id = ? AND state NOT IN ('delivered', 'undelivered')`,
      ),
      insertReceipt: db.prepare<[string, string, string, number, string | null, string | null, string, number, string, number | null], unknown>(
        `INSERT INTO receipts ${RECEIPT_INSERT_COLUMNS}
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      pendingReceipts: db.prepare<[string, string], PendingReceipt>(
        `SELECT id, status, final, error_code FROM receipts
         WHERE match_state = 'pending' AND transport = ? AND message_id = ? ORDER BY id`,
      ),
      matchReceipt: db.prepare<[number, number], unknown>(
        `UPDATE receipts SET match_state = 'matched', part_id = ? WHERE id = ?`,
      ),
      expireReceipts: db.prepare<[number], ExpiredReceipt>(
        `UPDATE receipts SET match_state = 'expired' WHERE match_state = 'pending' AND received_at < ?
         RETURNING id, transport, message_id, status, received_at`,
      ),
      recipientContext: db.prepare<[number], RecipientContext>(
        `SELECT r.id, r.status, r.last_status, r.msisdn, r.client_reference, c.client_id, c.sender, cl.webhook_url
         FROM recipients r JOIN campaigns c ON c.id = r.campaign_id JOIN clients cl ON cl.id = c.client_id
         WHERE r.id = ?`,
      ),
      partsOfRecipient: db.prepare<[number], PartStatusRow>(
        `SELECT part_number, state, last_status, final_at FROM message_parts WHERE recipient_id = ? ORDER BY part_number`,
      ),
      awaitingReceipt: db
        .prepare<[string], string>(
          `SELECT message_id FROM message_parts WHERE transport = ? AND state = 'submitted' AND message_id IS NOT NULL ORDER BY id`,
        )
        .pluck(),
    };
  }

  dueCampaigns(nowMs: number, limit: number): DueCampaign[] {
    return this.s.dueCampaigns.all(nowMs, limit);
  }

  waitingRecipients(campaignId: string, limit: number): WaitingRecipient[] {
    return this.s.waitingRecipients.all(campaignId, limit);
  }

  insertPart(part: NewPart, nowMs: number): void {
    this.s.insertPart.run(
      part.recipientId, part.campaignId, part.partNumber, part.partsTotal, part.concatReference, part.transport,
      part.state, part.lastStatus, part.nextAttemptAt, part.finalAt, nowMs, part.credits ?? 0,
    );
  }

  /** The campaigns named (any order; a campaign that is gone is left out), in one statement. */
  campaignTexts(campaignIds: readonly string[]): DueCampaign[] {
    return campaignIds.length === 0 ? [] : this.s.campaignTexts.all(JSON.stringify(campaignIds));
  }

  markRecipientDispatched(recipientId: number, nowMs: number): void {
    this.s.markRecipientDispatched.run(nowMs, recipientId);
  }

  /** markRecipientDispatched for many recipients in one statement. */
  markRecipientsDispatched(recipientIds: readonly number[], nowMs: number): void {
    if (recipientIds.length === 0) return;
    this.s.markRecipientsDispatched.run(nowMs, JSON.stringify(recipientIds));
  }

  /** insertPart for many parts, with multi-row INSERTs, in order (as materialising writes them). */
  insertParts(parts: readonly NewPart[], nowMs: number): void {
    this.partInserts.insert(parts, nowMs);
  }

  /** Sets campaigns.dispatched_at once no recipient of the campaign is waiting; true when it did. */
  markCampaignDispatchedIfDone(campaignId: string, nowMs: number): boolean {
    return this.s.closeCampaigns.all({ now: nowMs, ids: JSON.stringify([campaignId]) }).length > 0;
  }

  /** Campaigns with queued parts on the transport, in id order after `afterCampaignId` ('' for the first). */
  queuedCampaigns(transport: string, afterCampaignId: string, limit: number): string[] {
    return this.s.queuedCampaigns.all({ transport, after: afterCampaignId, limit });
  }

  /** Up to `limit` due parts of one campaign on the transport, oldest due first (not yet marked). */
  claimableInCampaign(transport: string, campaignId: string, nowMs: number, limit: number): ClaimablePart[] {
    return this.s.claimableInCampaign.all(transport, campaignId, nowMs, limit);
  }

  markSubmitting(partId: number, nowMs: number): boolean {
    return this.s.markSubmitting.run(nowMs, partId).changes > 0;
  }

  /** markSubmitting for many parts in one statement; returns the ids it moved (those still 'queued'). */
  markManySubmitting(partIds: readonly number[], nowMs: number): Set<number> {
    if (partIds.length === 0) return new Set();
    return new Set(this.s.markManySubmitting.all(nowMs, JSON.stringify(partIds)));
  }

  markSubmitted(partId: number, messageId: string, nowMs: number): boolean {
    return this.partWrites.markSubmitted([{ partId, messageId }], nowMs) > 0;
  }

  requeue(partId: number, attempts: number, nextAttemptAt: number, lastStatus: string | null, errorCode: string | null, nowMs: number): boolean {
    return this.s.requeue.run(attempts, nextAttemptAt, lastStatus, errorCode, nowMs, partId).changes > 0;
  }

  failPart(partId: number, attempts: number, status: string, errorCode: string | null, nowMs: number): boolean {
    return this.s.failPart.run(attempts, status, errorCode, nowMs, nowMs, partId).changes > 0;
  }

  partByMessageId(transport: string, messageId: string): PartForReceipt | undefined {
    return this.s.partByMessageId.get(transport, messageId);
  }

  /** Moves a part to its final state unless it already has one (a final state is never overwritten). */
  finishPart(partId: number, state: 'delivered' | 'undelivered', status: string, errorCode: string | null, nowMs: number): boolean {
    return this.partWrites.finishParts([{ partId, state, status, errorCode }], nowMs) > 0;
  }

  notePartStatus(partId: number, status: string, nowMs: number): boolean {
    return this.s.notePartStatus.run(status, nowMs, partId).changes > 0;
  }

  insertReceipt(r: ReceiptInsert): number {
    const result = this.s.insertReceipt.run(
      r.transport, r.messageId, r.status, r.final ? 1 : 0, r.errorCode, r.doneAt, r.raw, r.receivedAt, r.matchState, r.partId,
    );
    return Number(result.lastInsertRowid);
  }

  pendingReceipts(transport: string, messageId: string): PendingReceipt[] {
    return this.s.pendingReceipts.all(transport, messageId);
  }

  /** Inserts receipts with multi-row INSERTs (MultiRowInsert), in order. */
  insertReceipts(rows: readonly ReceiptInsert[]): void {
    this.receiptInserts.run(rows);
  }

  matchReceipt(receiptId: number, partId: number): void {
    this.s.matchReceipt.run(partId, receiptId);
  }

  expireReceipts(receivedBeforeMs: number): ExpiredReceipt[] {
    return this.s.expireReceipts.all(receivedBeforeMs);
  }

  recipientContext(recipientId: number): RecipientContext | undefined {
    return this.s.recipientContext.get(recipientId);
  }

  partsOfRecipient(recipientId: number): PartStatusRow[] {
    return this.s.partsOfRecipient.all(recipientId);
  }

  updateRecipient(recipientId: number, status: RecipientStatus, lastStatus: string | null, nowMs: number): void {
    this.partWrites.updateRecipients([{ recipientId, status, lastStatus }], nowMs);
  }

  /** Message ids of the transport's parts still waiting for a final receipt (crash recovery of in-memory receipts). */
  messageIdsAwaitingReceipt(transport: string): string[] {
    return this.s.awaitingReceipt.all(transport);
  }

  /** Crash recovery of the single gateway this file belongs to (steps/recovery.ts): its parts left 'submitting' are queued again. */
  requeueAllSubmitting(nowMs: number): number {
    return this.recovery.requeueSubmitting(null, nowMs);
  }

  /** Recipients marked dispatched without any part go back to waiting, their campaigns to not dispatched (steps/recovery.ts). */
  reopenOrphanedRecipients(): number {
    return this.recovery.reopenOrphanedRecipients();
  }
}
