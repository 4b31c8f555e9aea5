/**
 * New message parts inserted many at a time on SQLite, ids assigned in the parts' order. Materialising writes a pass's parts with it.
 */
import type { SqliteDatabase } from './database.js';
import type { NewPart } from '../dispatch-steps.js';
import { MultiRowInsert } from './multi-row-insert.js';

/** The columns a new part is inserted with. */
export const PART_INSERT_COLUMNS = `(recipient_id, campaign_id, part_number, parts_total, concat_reference, transport, state,
           last_status, next_attempt_at, final_at, updated_at, credits)`;

/** New parts with multi-row INSERTs (MultiRowInsert), ids assigned in the parts' order. */
export class SqlitePartInserts {
  private readonly inserts: MultiRowInsert<{ part: NewPart; nowMs: number }>;

  constructor(db: SqliteDatabase) {
    this.inserts = new MultiRowInsert(db, `INSERT INTO message_parts ${PART_INSERT_COLUMNS} VALUES`, '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', ({ part: p, nowMs }) =>
      [p.recipientId, p.campaignId, p.partNumber, p.partsTotal, p.concatReference, p.transport, p.state, p.lastStatus, p.nextAttemptAt, p.finalAt, nowMs,
        p.credits ?? 0]);
  }

  insert(parts: readonly NewPart[], nowMs: number): void {
    this.inserts.run(parts.map((part) => ({ part, nowMs })));
  }
}
