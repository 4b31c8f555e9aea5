/**
 * The outbox of one gateway on its SQLite file (the default): the webhook-store functions on a
 * better-sqlite3 connection, answering synchronously, as the sender always used them. No leases:
 * the one `serve` per file (src/store/sqlite/serve-lock.ts) is the only sender.
 */
import type { SqliteDatabase } from '../../store/sqlite/database.js';
import {
  assignEventId, listRedriveEndpoints, recordAttempts, redriveDeadLetters, requeueProbe,
  selectDueOutboxRows, type AttemptRecord, type DueOutboxRow, type RedriveEndpoint, type RedriveFilter,
} from '../../store/sqlite/webhook-store.js';
import { selectDueOutboxRowsAfter, selectDueOutboxRowsExcept } from '../../store/sqlite/webhook-outbox-cursor.js';
import { NOTHING_REFUSED, type ProbeOutcome, type ResultsWritten, type UnleasedRead, type WebhookOutbox } from '../outbox.js';

export class SqliteWebhookOutbox implements WebhookOutbox {
  readonly leasesRows = false;
  /** As before: a failed write is logged and its rows, still pending, are sent again. */
  readonly retriesFailedWrites = false;

  constructor(private readonly db: SqliteDatabase) {}

  claimDue(nowMs: number, maxRows: number, _leaseMs?: number, read?: UnleasedRead): DueOutboxRow[] {
    if (read === undefined) return selectDueOutboxRows(this.db, nowMs, maxRows);
    switch (read.kind) {
      case 'after':
        return selectDueOutboxRowsAfter(this.db, read.afterId, nowMs, maxRows);
      case 'all-but':
        return read.heldIds.size === 0 ? selectDueOutboxRows(this.db, nowMs, maxRows) : selectDueOutboxRowsExcept(this.db, nowMs, maxRows, read.heldIds);
    }
  }

  recordAttempts(records: readonly AttemptRecord[]): ResultsWritten {
    recordAttempts(this.db, records);
    return NOTHING_REFUSED;
  }

  assignEventId(id: number): string {
    return assignEventId(this.db, id);
  }

  listRedriveEndpoints(cutoffMs: number): RedriveEndpoint[] {
    return listRedriveEndpoints(this.db, cutoffMs);
  }

  requeueProbe(filter: RedriveFilter, nowMs: number): ProbeOutcome {
    const id = requeueProbe(this.db, filter, nowMs);
    return id === null ? { kind: 'none-left' } : { kind: 'requeued', id, claimed: null };
  }

  redriveDeadLetters(filter: RedriveFilter, nowMs: number): number {
    return redriveDeadLetters(this.db, filter, nowMs);
  }

  release(): void {
    // Nothing is leased: an unsent row is pending and due, and the next start reads it.
  }
}
