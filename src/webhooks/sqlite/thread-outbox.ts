/**
 * The outbox of the sender thread (sender-worker.ts): the gateway's SQLite file, read through the
 * thread's own connection (WAL lets it read while the gateway writes), with the attempt results
 * handed to the gateway, which writes them on its connection. The database so keeps one writer
 * on the hot path: no transaction elsewhere in the gateway (most begin by reading) meets a commit
 * from this thread between its read and its write (SQLITE_BUSY_SNAPSHOT). Rare writes (a missing
 * event id, redrive of dead letters) use the thread's connection and its busy timeout, as the
 * webhook CLI commands do from their own processes.
 *
 * The same contract as SqliteWebhookOutbox, which it wraps: no leases (one sender per file), and a
 * failed results write is dropped, its rows still pending and sent again.
 */
import type { AttemptRecord, DueOutboxRow, RedriveEndpoint, RedriveFilter } from '../../store/sqlite/webhook-store.js';
import { NOTHING_REFUSED, type ProbeOutcome, type ResultsWritten, type UnleasedRead, type WebhookOutbox } from '../outbox.js';
import type { SqliteWebhookOutbox } from './outbox.js';

export class SenderThreadOutbox implements WebhookOutbox {
  readonly leasesRows = false;
  readonly retriesFailedWrites = false;

  constructor(
    /** The thread's own connection to the file. */
    private readonly local: SqliteWebhookOutbox,
    /** Resolves once the gateway wrote the results on its connection; rejects when that failed. */
    private readonly writeOnGateway: (records: readonly AttemptRecord[]) => Promise<void>,
  ) {}

  claimDue(nowMs: number, maxRows: number, leaseMs?: number, read?: UnleasedRead): DueOutboxRow[] {
    return this.local.claimDue(nowMs, maxRows, leaseMs, read);
  }

  async recordAttempts(records: readonly AttemptRecord[]): Promise<ResultsWritten> {
    await this.writeOnGateway(records);
    return NOTHING_REFUSED;
  }

  assignEventId(id: number): string {
    return this.local.assignEventId(id);
  }

  listRedriveEndpoints(cutoffMs: number): RedriveEndpoint[] {
    return this.local.listRedriveEndpoints(cutoffMs);
  }

  requeueProbe(filter: RedriveFilter, nowMs: number): ProbeOutcome {
    return this.local.requeueProbe(filter, nowMs);
  }

  redriveDeadLetters(filter: RedriveFilter, nowMs: number): number {
    return this.local.redriveDeadLetters(filter, nowMs);
  }

  release(): void {
    // Nothing is leased (SqliteWebhookOutbox.release).
  }
}
