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

export class PartChangeQueries {
  private readonly s;

  constructor(db: SqliteDatabase) {
    this.s = {
      parts: db.prepare<[string], PartRow>(`SELECT ${PART_COLUMNS} FROM ${PARTS_FROM} WHERE p.id IN (SELECT value FROM json_each(?))`),
      partsOfRecipients: db.prepare<[string], PartRow>(
        `SELECT ${PART_COLUMNS} FROM ${PARTS_FROM} WHERE p.recipient_id IN (SELECT value FROM json_each(?)) ORDER BY p.recipient_id, p.part_number`,
      ),
      recipients: db.prepare<[string], RecipientRow>(
        `SELECT r.id, r.status, r.last_status, r.msisdn, r.client_reference, c.client_id, c.sender, cl.webhook_url, ${SMPP_COLUMNS}
         FROM recipients r JOIN campaigns c ON c.id = r.campaign_id JOIN clients cl ON cl.id = c.client_id
         WHERE r.id IN (SELECT value FROM json_each(?)) ORDER BY r.id`,
      ),
      targets: db.prepare<[{ transport: string; ids: string }], MessageIdTarget>(
        `SELECT @transport AS transport, j.value AS message_id, p.id AS part_id FROM json_each(@ids) j
         JOIN message_parts p ON p.id = (SELECT id FROM message_parts WHERE transport = @transport AND message_id = j.value ORDER BY id DESC LIMIT 1)`,
      ),
      unmatchedOf: db.prepare<[string, string], UnmatchedReceiptRow>(
        `SELECT id, transport, message_id, status, final, error_code FROM receipts
         WHERE match_state = 'pending' AND transport = ? AND message_id IN (SELECT value FROM json_each(?)) ORDER BY id`,
      ),
      matchable: db.prepare<[number], UnmatchedReceiptRow & { part_id: number }>(
        `SELECT r.id, r.transport, r.message_id, r.status, r.final, r.error_code, p.id AS part_id FROM receipts r
         JOIN message_parts p ON p.id = (SELECT id FROM message_parts WHERE transport = r.transport AND message_id = r.message_id ORDER BY id DESC LIMIT 1)
         WHERE r.match_state = 'pending' ORDER BY r.id LIMIT ?`,
      ),
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

  /** The part each message id of the transport names (its newest part with that id); ids naming none are left out. */
  targets(transport: string, messageIds: readonly string[]): MessageIdTarget[] {
    return messageIds.length === 0 ? [] : this.s.targets.all({ transport, ids: JSON.stringify(messageIds) });
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
