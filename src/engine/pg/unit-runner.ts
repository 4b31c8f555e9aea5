/**
 * The engine's outcome and receipt units on PostgreSQL: each runs as one transaction on one pooled
 * connection, and one the database refuses for a passing reason (a dropped connection, a failover,
 * a deadlock: isTransientStoreFailure) is run again with backoff until it commits, as the SQLite
 * WriteBatcher does for a full disk (issue 9 item 4, issue 11 item 2). Its caller simply waits: a
 * submit keeps its window slot, a receipt stays unacknowledged at the SMSC. While any unit waits
 * for its retry `stalled` is true and the lanes claim nothing new. The failure is logged once, then
 * at most every failureLogIntervalMs. A unit runs again from its start (the rolled-back attempt
 * changed nothing), so effects outside the database belong after the promise.
 */
import { GatewayError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { inTransaction, type PgClient, type PgPool } from '../../store/pg/pool.js';
import { isTransientStoreFailure } from '../../store/write-failures.js';
import { FAILURE_LOG_INTERVAL_MS, FailureLog } from '../failure-log.js';

export interface PgWriteRetryOptions {
  /** Wait before the first retry of a refused unit; doubles per failure up to retryMaxDelayMs. */
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  /** At most one log line per this interval while the database keeps refusing. */
  failureLogIntervalMs?: number;
}

export const PG_WRITE_RETRY_DEFAULTS = { retryBaseDelayMs: 100, retryMaxDelayMs: 2_000 } as const;

export class PgUnitRunner {
  /** Units committed since start. */
  commits = 0;
  /** Attempts the database refused for a passing reason (each was retried). */
  failedCommits = 0;
  /** Units waiting for a retry now. */
  private retrying = 0;
  private closed = false;
  private readonly sleepers = new Set<() => void>();
  private readonly failureLog: FailureLog;
  private readonly retryBaseDelayMs: number;
  private readonly retryMaxDelayMs: number;

  constructor(
    private readonly pool: PgPool,
    logger: Logger,
    options: PgWriteRetryOptions = {},
  ) {
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? PG_WRITE_RETRY_DEFAULTS.retryBaseDelayMs;
    this.retryMaxDelayMs = options.retryMaxDelayMs ?? PG_WRITE_RETRY_DEFAULTS.retryMaxDelayMs;
    this.failureLog = new FailureLog(logger, 'committing outcomes and receipts', options.failureLogIntervalMs ?? FAILURE_LOG_INTERVAL_MS);
  }

  get stalled(): boolean {
    return this.retrying > 0;
  }

  /** Runs `unit` in one transaction; resolves with its result once committed. */
  async write<T>(unit: (client: PgClient) => Promise<T>): Promise<T> {
    if (this.closed) throw new GatewayError('STORE_CLOSED', 'stopped before the store accepted this write');
    let failures = 0;
    try {
      for (;;) {
        try {
          const result = await inTransaction(this.pool, unit);
          this.commits++;
          return result;
        } catch (err) {
          // After close() a waiting unit gets one last attempt, then fails like any other write.
          if (!isTransientStoreFailure(err) || this.closed) throw err;
          this.failedCommits++;
          if (failures === 0) this.retrying++;
          failures++;
          this.failureLog.failed(err, { waitingUnits: this.retrying });
          await this.sleep(Math.min(this.retryMaxDelayMs, this.retryBaseDelayMs * 2 ** Math.min(failures - 1, 20)));
        }
      }
    } finally {
      if (failures > 0) {
        this.retrying--;
        if (this.retrying === 0) this.failureLog.recovered();
      }
    }
  }

  /** No new units; units waiting for a retry make one last attempt now. */
  close(): void {
    this.closed = true;
    for (const wake of [...this.sleepers]) wake();
  }

  private sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, delayMs);
      this.sleepers.add(wake);
    });
  }
}
