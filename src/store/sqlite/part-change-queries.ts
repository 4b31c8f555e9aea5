/**
 * The reads of the engine's part-changing steps (submit outcomes, receipts, the unmatched-receipt
 * sweep) on SQLite: prepared statements, each for a whole batch (ids passed as one JSON array).
 * Synchronous, run inside the engine's group-commit transaction; the writes are DispatchStore's.
 */
import type { MessageIdTarget, PartRow, RecipientRow, UnmatchedReceiptRow } from '../part-change-rows.js';
import type { SqliteDatabase } from './database.js';

const PART_COLUMNS = 'p.id, p.recipient_id, p.part_number, p.parts_total, p.state, p.last_status, p.final_at, p.claimed_by, p.credits, p.campaign_id, c.client_id';
/** A part with its campaign's client (whose credits its charge or release moves), in the same statement. */
const PARTS_FROM = 'message_parts p JOIN campaigns c ON c.id = p.campaign_id';
/**
 * What an SMPP customer's receipt needs of the recipient's campaign (the campaign's text only for
 * an SMPP submit: an HTTP campaign's text is not read for every status change).
 */
const SMPP_COLUMNS = 'c.id AS campaign_id, c.smpp_account_id, c.smpp_submit, c.created_at AS campaign_created_at, '
  + 'CASE WHEN c.smpp_account_id IS NULL THEN NULL ELSE c.text END AS smpp_text';

/**
 * The statements, exported so test/store/live-row-index-plans.test.ts checks the plans of the very
 * text the store runs. A receipt's part is found through message_parts_message_id (partial: only
 * parts with a message id; `message_id = ...` implies it), an unmatched receipt through
 * receipts_pending (partial: match_state = 'pending', literal here so SQLite uses it).
 */
export const PART_CHANGE_SQL = {
  parts: `SELECT ${PART_COLUMNS} FROM ${PARTS_FROM} WHERE p.id IN (SELECT value FROM json_each(?))`,
  partsOfRecipients: `SELECT ${PART_COLUMNS} FROM ${PARTS_FROM} WHERE p.recipient_id IN (SELECT value FROM json_each(?)) ORDER BY p.recipient_id, p.part_number`,
  recipients: `SELECT r.id, r.status, r.last_status, r.msisdn, r.client_reference, c.client_id, c.sender, cl.webhook_url, ${SMPP_COLUMNS}
    FROM recipients r JOIN campaigns c ON c.id = r.campaign_id JOIN clients cl ON cl.id = c.client_id
    WHERE r.id IN (SELECT value FROM json_each(?)) ORDER BY r.id`,
  /**
   * The part each message id names (its newest part with that id) with the part's row, in one
   * statement: a receipt batch reads its parts once, not once to find them and again to read them.
   */
  targetParts: `SELECT @transport AS target_transport, j.value AS target_message_id, ${PART_COLUMNS} FROM json_each(@ids) j
    JOIN message_parts p ON p.id = (SELECT id FROM message_parts WHERE transport = @transport AND message_id = j.value ORDER BY id DESC LIMIT 1)
    JOIN campaigns c ON c.id = p.campaign_id`,
  unmatchedOf: `SELECT id, transport, message_id, status, final, error_code FROM receipts
    WHERE match_state = 'pending' AND transport = ? AND message_id IN (SELECT value FROM json_each(?)) ORDER BY id`,
  matchable: `SELECT r.id, r.transport, r.message_id, r.status, r.final, r.error_code, p.id AS part_id FROM receipts r
    JOIN message_parts p ON p.id = (SELECT id FROM message_parts WHERE transport = r.transport AND message_id = r.message_id ORDER BY id DESC LIMIT 1)
    WHERE r.match_state = 'pending' ORDER BY r.id LIMIT ?`,
} as const;

type TargetPartRow = PartRow & { target_transport: string; target_message_id: string };

export class PartChangeQueries {
  private readonly s;

  constructor(db: SqliteDatabase) {
    this.s = {
      parts: db.prepare<[string], PartRow>(PART_CHANGE_SQL.parts),
      partsOfRecipients: db.prepare<[string], PartRow>(PART_CHANGE_SQL.partsOfRecipients),
      recipients: db.prepare<[string], RecipientRow>(PART_CHANGE_SQL.recipients),
      targetParts: db.prepare<[{ transport: string; ids: string }], TargetPartRow>(PART_CHANGE_SQL.targetParts),
      unmatchedOf: db.prepare<[string, string], UnmatchedReceiptRow>(PART_CHANGE_SQL.unmatchedOf),
      matchable: db.prepare<[number], UnmatchedReceiptRow & { part_id: number }>(PART_CHANGE_SQL.matchable),
    };
  }

  /** The parts with these ids, as they are now. */
  parts(partIds: readonly number[]): PartRow[] {
    return partIds.length === 0 ? [] : this.s.parts.all(JSON.stringify(partIds));
  }

  /** Every part of these recipients. */
  partsOfRecipients(recipientIds: readonly number[]): PartRow[] {
    return recipientIds.length === 0 ? [] : this.s.partsOfRecipients.all(JSON.stringify(recipientIds));
  }

  /** These recipients with their Delivery Receipt context; a recipient that no longer exists is left out. */
  recipients(recipientIds: readonly number[]): RecipientRow[] {
    return recipientIds.length === 0 ? [] : this.s.recipients.all(JSON.stringify(recipientIds));
  }

  /**
   * The part each message id of the transport names (its newest part with that id), and those
   * parts as they are now (each once); ids naming none are left out.
   */
  targetParts(transport: string, messageIds: readonly string[]): { targets: MessageIdTarget[]; parts: PartRow[] } {
    if (messageIds.length === 0) return { targets: [], parts: [] };
    const targets: MessageIdTarget[] = [];
    const parts = new Map<number, PartRow>();
    for (const { target_transport, target_message_id, ...part } of this.s.targetParts.all({ transport, ids: JSON.stringify(messageIds) })) {
      targets.push({ transport: target_transport, message_id: target_message_id, part_id: part.id });
      parts.set(part.id, part);
    }
    return { targets, parts: [...parts.values()] };
  }

  /** The unmatched receipts of any of the transport's message ids, oldest first. */
  unmatchedOf(transport: string, messageIds: readonly string[]): UnmatchedReceiptRow[] {
    return messageIds.length === 0 ? [] : this.s.unmatchedOf.all(transport, JSON.stringify(messageIds));
  }

  /** Up to `limit` unmatched receipts, oldest first, whose message id names a part now, with that part's id. */
  matchable(limit: number): (UnmatchedReceiptRow & { part_id: number })[] {
    return this.s.matchable.all(limit);
  }
}
