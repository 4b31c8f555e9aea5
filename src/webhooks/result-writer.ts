/**
 * Writes attempt results to the outbox in small batches: one write per flushIntervalMs (or sooner
 * once flushBatchRows are waiting), so a fast receiver does not cost one synchronous commit per
 * webhook; a crash before a write only means a re-send. An outbox that keeps failed writes
 * (PostgreSQL: a failover drops connections) has a failed batch tried again every WRITE_RETRY_MS,
 * its rows still held by the sender and leased to this node, until it is written or the sender's
 * stop gives up; otherwise the batch is dropped and its rows, still pending, are sent again.
 */
import { FailureLog, FAILURE_LOG_INTERVAL_MS } from '../common/failure-log.js';
import type { Logger } from '../common/log.js';
import type { AttemptRecord } from '../store/sqlite/webhook-store.js';
import { NOTHING_REFUSED, settle, type ResultsWritten, type WebhookOutbox } from './outbox.js';

/** How soon a results write the outbox refused to take (database unreachable) is tried again. */
const WRITE_RETRY_MS = 1_000;

export interface ResultWriterOptions {
  outbox: WebhookOutbox;
  logger: Logger;
  /** The sender's log of outbox failures (one line per outage, not per call). */
  outboxFailures: FailureLog;
  flushIntervalMs: number;
  flushBatchRows: number;
  /** Keeps a write answering later (PostgreSQL) until its answer is handled: the sender's stop waits for it. */
  track(call: Promise<void>): void;
  /**
   * A batch is written, or failed to be and was given up (`dropped`: its rows are still pending,
   * and due, so they are sent again): its rows may be read again.
   */
  written(batch: readonly AttemptRecord[], written: ResultsWritten, dropped: boolean): void;
}

export class ResultWriter {
  private results: AttemptRecord[] = [];
  /** Batches being written (or waiting to be written again). */
  private writing = 0;
  private flushTimer: NodeJS.Timeout | null = null;
  /** Set by giveUpAfter(): a write still failing after this (by the system clock) is given up. */
  private giveUpAtMs = Number.POSITIVE_INFINITY;

  /**
   * Batches dropped because the outbox refused them (SQLite full or read-only): one error line when
   * it starts, then a summary at most every 30 s and one line when writes work again, not a line
   * per batch for as long as the disk stays full.
   */
  private readonly dropped: FailureLog;

  constructor(private readonly options: ResultWriterOptions) {
    this.dropped = new FailureLog(options.logger, 'writing webhook results', FAILURE_LOG_INTERVAL_MS, Date.now, {
      level: 'error',
      recoveredLevel: 'info',
      messages: {
        failed: `writing webhook results failed; those events will be sent again (further failures are logged at most every ${FAILURE_LOG_INTERVAL_MS} ms)`,
        stillFailing: 'writing webhook results still failing; those events will be sent again',
        recovered: 'writing webhook results works again',
      },
    });
  }

  /** Nothing waiting for a write and nothing being written. */
  get idle(): boolean {
    return this.results.length === 0 && this.writing === 0;
  }

  /** Batches still being written. */
  get writesInFlight(): number {
    return this.writing;
  }

  add(record: AttemptRecord): void {
    this.results.push(record);
    if (this.results.length >= this.options.flushBatchRows) this.flush();
    else if (this.flushTimer === null) this.flushTimer = setTimeout(() => this.flush(), this.options.flushIntervalMs);
  }

  /** Writes what is waiting now. */
  flush(): void {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const batch = this.results;
    if (batch.length === 0) return;
    this.results = [];
    this.write(batch);
  }

  /** Failed writes are tried again for at most `ms` from now (the sender stops), then given up. */
  giveUpAfter(ms: number): void {
    this.giveUpAtMs = Date.now() + ms;
  }

  private write(batch: readonly AttemptRecord[]): void {
    const { outbox, outboxFailures } = this.options;
    const later = settle(() => outbox.recordAttempts(batch),
      (written, deferred) => {
        if (deferred) this.writing -= 1;
        outboxFailures.recovered();
        this.dropped.recovered();
        this.options.written(batch, written, false);
      },
      (err, deferred) => {
        if (deferred) this.writing -= 1;
        if (outbox.retriesFailedWrites && Date.now() < this.giveUpAtMs) {
          outboxFailures.failed(err, { what: 'writing results', rows: batch.length });
          this.writing += 1;
          setTimeout(() => {
            this.writing -= 1;
            this.write(batch);
          }, WRITE_RETRY_MS);
          return;
        }
        // The rows stay 'pending' in the outbox, so they are attempted again: a duplicate, not a loss.
        this.dropped.failed(err, { rows: batch.length });
        this.options.written(batch, NOTHING_REFUSED, true);
      });
    if (later === null) return;
    this.writing += 1;
    this.options.track(later);
  }
}
