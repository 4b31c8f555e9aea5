/**
 * The per-commit updates of parts and recipients on SQLite, each row with values of its own, as
 * one statement a batch (MultiRowUpdate) instead of one a row: a part the carrier accepted, a part
 * a receipt finished, a recipient's new status. Run inside the engine's group-commit transaction
 * (src/engine/sqlite/step-stores.ts); DispatchStore's one-row methods are these with one row.
 */
import type { RecipientStatus } from '../entities.js';
import type { SqliteDatabase } from './database.js';
import { MultiRowUpdate, type MultiRowUpdateSql } from './multi-row-update.js';

/** A part the carrier accepted, with the message id it gave. */
export interface SubmittedPart {
  partId: number;
  messageId: string;
}

/** A part's final state from a receipt. */
export interface FinishedPart {
  partId: number;
  state: 'delivered' | 'undelivered';
  status: string;
  errorCode: string | null;
}

/** A recipient's new status. */
export interface RecipientStatusWrite {
  recipientId: number;
  status: RecipientStatus;
  lastStatus: string | null;
}

/**
 * The statements, exported so test/store/live-row-index-plans.test.ts checks
 * that each joins its rows by primary key. The guards are the per-row statements' guards: an
 * acceptance only of a part still 'submitting' (the claim fence), a final state never overwritten.
 */
export const ROW_UPDATES_SQL = {
  /** Shared parameters: submitted_at, updated_at; a row: (part id, message id). */
  submitted: {
    update: `UPDATE message_parts SET state = 'submitted', message_id = v.column2, attempts = attempts + 1, submitted_at = ?,
      last_error_code = NULL, updated_at = ?`,
    rowTuple: '(?, ?)',
    where: `message_parts.id = v.column1 AND message_parts.state = 'submitting'`,
  },
  /** Shared parameters: final_at, updated_at; a row: (part id, state, status, error code). */
  finished: {
    update: `UPDATE message_parts SET state = v.column2, last_status = v.column3, last_error_code = v.column4, final_at = ?, updated_at = ?`,
    rowTuple: '(?, ?, ?, ?)',
    where: `message_parts.id = v.column1 AND message_parts.state NOT IN ('delivered', 'undelivered')`,
  },
  /** Shared parameter: updated_at; a row: (recipient id, status, last status). */
  recipients: {
    update: `UPDATE recipients SET status = v.column2, last_status = v.column3, updated_at = ?`,
    rowTuple: '(?, ?, ?)',
    where: `recipients.id = v.column1`,
  },
} as const satisfies Record<string, MultiRowUpdateSql>;

export class SqlitePartWrites {
  private readonly submitted: MultiRowUpdate<SubmittedPart, [number, number]>;
  private readonly finished: MultiRowUpdate<FinishedPart, [number, number]>;
  private readonly recipients: MultiRowUpdate<RecipientStatusWrite, [number]>;

  constructor(db: SqliteDatabase) {
    this.submitted = new MultiRowUpdate(db, ROW_UPDATES_SQL.submitted, (p) => [p.partId, p.messageId]);
    this.finished = new MultiRowUpdate(db, ROW_UPDATES_SQL.finished, (p) => [p.partId, p.state, p.status, p.errorCode]);
    this.recipients = new MultiRowUpdate(db, ROW_UPDATES_SQL.recipients, (r) => [r.recipientId, r.status, r.lastStatus]);
  }

  /** Accepted parts (distinct), moved only while still 'submitting'; returns how many moved. */
  markSubmitted(parts: readonly SubmittedPart[], nowMs: number): number {
    return parts.length === 0 ? 0 : this.submitted.run(parts, nowMs, nowMs);
  }

  /** Parts (distinct) to their final state, unless they have one already; returns how many moved. */
  finishParts(parts: readonly FinishedPart[], nowMs: number): number {
    return parts.length === 0 ? 0 : this.finished.run(parts, nowMs, nowMs);
  }

  /** Recipients' (distinct) new statuses. */
  updateRecipients(recipients: readonly RecipientStatusWrite[], nowMs: number): void {
    if (recipients.length > 0) this.recipients.run(recipients, nowMs);
  }
}
