/**
 * New message parts inserted many at a time on SQLite: multi-row INSERTs, prepared once per row
 * count, ids assigned in the parts' order. Materialising writes a pass's parts with it.
 */
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from './database.js';
import type { NewPart } from '../dispatch-steps.js';

/** The columns a new part is inserted with. */
export const PART_INSERT_COLUMNS = `(recipient_id, campaign_id, part_number, parts_total, concat_reference, transport, state,
           last_status, next_attempt_at, final_at, updated_at)`;

/** Rows per multi-row INSERT of parts: 11 parameters a row, well under SQLite's 32,766. */
const PART_ROWS_PER_INSERT = 64;

export class SqlitePartInserts {
  /** Multi-row INSERT INTO message_parts statements by row count, prepared when first needed. */
  private readonly statements = new Map<number, Statement<unknown[], unknown>>();

  constructor(private readonly db: SqliteDatabase) {}

  insert(parts: readonly NewPart[], nowMs: number): void {
    for (let start = 0; start < parts.length; start += PART_ROWS_PER_INSERT) {
      const chunk = parts.slice(start, start + PART_ROWS_PER_INSERT);
      const params: unknown[] = [];
      for (const p of chunk) {
        params.push(p.recipientId, p.campaignId, p.partNumber, p.partsTotal, p.concatReference, p.transport, p.state, p.lastStatus, p.nextAttemptAt, p.finalAt, nowMs);
      }
      this.statementFor(chunk.length).run(...params);
    }
  }

  private statementFor(rows: number): Statement<unknown[], unknown> {
    let statement = this.statements.get(rows);
    if (statement === undefined) {
      const values = Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
      statement = this.db.prepare<unknown[], unknown>(`INSERT INTO message_parts ${PART_INSERT_COLUMNS} VALUES ${values}`);
      this.statements.set(rows, statement);
    }
    return statement;
  }
}
