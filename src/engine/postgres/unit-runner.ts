/**
 * Group commit for the engine's outcome and receipt units on PostgreSQL, as the WriteBatcher does on
 * SQLite: units queued within maxDelayMs, or while every one of maxConcurrent transactions is
 * running, go into ONE transaction on one pooled connection, run one after another, so BEGIN/COMMIT
 * and the commit's wait are paid per batch instead of per unit. Up to maxConcurrent such
 * transactions run at once on their own connections (a unit is several round trips: one
 * transaction at a time would leave the database idle while this process waits for each answer). Submit outcomes (`first`) run before the receipts of
 * their batch, so a receipt that arrived a moment before its submit_sm_resp finds the message id
 * in the same transaction instead of being stored unmatched. Each caller's promise settles only after COMMIT.
 *
 * A batch the database refuses for a passing reason (a dropped connection, a failover, a deadlock:
 * isTransientStoreFailure) is kept and run again with backoff until it commits: its callers wait, a submit keeps its window slot, a receipt stays
 * unacknowledged at the SMSC, and while it waits `stalled` is true and the lanes claim nothing new.
 * The failure is logged once, then at most every failureLogIntervalMs. After a failure no retry can
 * cure, each unit runs alone so one bad unit does not fail its neighbours. A unit may run more than
 * once (the rolled-back attempt changed nothing), so effects outside the database follow the promise.
 */
import { GatewayError } from '../../common/errors.js';
import type { Logger } from '../../common/log.js';
import { inTransaction, type PgClient, type PgPool } from '../../store/postgres/pool.js';
import { isTransientStoreFailure } from '../../store/write-failures.js';
import { FAILURE_LOG_INTERVAL_MS, FailureLog } from '../../common/failure-log.js';
import { backoffDelayMs } from '../retry-policy.js';

export interface PgWriteRetryOptions {
  /** Wait before the first retry of a refused batch; doubles per failure up to retryMaxDelayMs. */
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  /** At most one log line per this interval while the database keeps refusing. */
  failureLogIntervalMs?: number;
  /** How long the first unit of a batch waits for company when no transaction is running. */
  maxDelayMs?: number;
  /** Units per transaction at most. */
  maxBatch?: number;
  /** Transactions running at once at most (each holds one pooled connection). */
  maxConcurrent?: number;
}

export const PG_WRITE_RETRY_DEFAULTS = { retryBaseDelayMs: 100, retryMaxDelayMs: 2_000, maxDelayMs: 2, maxBatch: 32, maxConcurrent: 4 } as const;

/**
 * Units of one kind applied together: the items of a group queued next to each other in a batch go
 * to one `apply` call inside its transaction (a few statements for many rows instead of several per
 * item), which returns one result per item, in order. After a failure no retry cures, each item is
 * applied alone.
 */
export interface PgWriteGroup<I, R> {
  apply(client: PgClient, items: readonly I[]): Promise<R[]>;
}

interface Pending {
  /** A unit of its own; undefined for an item of a group. */
  run: ((client: PgClient) => Promise<unknown>) | undefined;
  group: PgWriteGroup<unknown, unknown> | undefined;
  item: unknown;
  result: unknown;
  resolve: (result: unknown) => void;
  reject: (err: unknown) => void;
  first: boolean;
}

export class PgUnitRunner {
  /** Transactions committed since start. */
  commits = 0;
  /** Commit attempts the database refused for a passing reason (each was retried). */
  failedCommits = 0;
  private pending: Pending[] = [];
  private pendingFirst: Pending[] = [];
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Failed attempts since the last commit; > 0 means stalled. */
  private consecutiveFailures = 0;
  private closed = false;
  /** Transactions started and not yet ended. */
  private readonly flushing = new Set<Promise<void>>();
  private readonly failureLog: FailureLog;
  private readonly options: Required<Omit<PgWriteRetryOptions, 'failureLogIntervalMs'>>;

  constructor(
    private readonly pool: PgPool,
    logger: Logger,
    options: PgWriteRetryOptions = {},
  ) {
    this.options = { ...PG_WRITE_RETRY_DEFAULTS, ...options };
    this.failureLog = new FailureLog(logger, 'committing outcomes and receipts', options.failureLogIntervalMs ?? FAILURE_LOG_INTERVAL_MS);
  }

  get stalled(): boolean {
    return this.consecutiveFailures > 0;
  }

  /** Queues `unit` for the next transaction; resolves with its result once that committed. */
  write<T>(unit: (client: PgClient) => Promise<T>, options: { first?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closed) {
        reject(new GatewayError('STORE_CLOSED', 'stopped before the store accepted this write'));
        return;
      }
      this.enqueue({ run: unit, group: undefined, item: undefined, result: undefined, resolve: resolve as (result: unknown) => void, reject, first: options.first === true });
    });
  }

  /** Queues one item of a group (see PgWriteGroup); resolves with its result once the transaction holding it committed. */
  writeInGroup<I, R>(group: PgWriteGroup<I, R>, item: I, options: { first?: boolean } = {}): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (this.closed) {
        reject(new GatewayError('STORE_CLOSED', 'stopped before the store accepted this write'));
        return;
      }
      this.enqueue({
        run: undefined, group: group as unknown as PgWriteGroup<unknown, unknown>, item, result: undefined, resolve: resolve as (result: unknown) => void, reject,
        first: options.first === true,
      });
    });
  }

  private enqueue(pending: Pending): void {
    (pending.first ? this.pendingFirst : this.pending).push(pending);
    this.schedule();
  }

  /**
   * No new units; what is queued (a batch waiting for its retry included) makes one last attempt
   * now, and fails if refused. Resolves once every transaction this runner started has ended: a
   * stopped engine leaves no write of its own running (it would race the next owner of the rows).
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of [this.timer, this.retryTimer]) if (timer !== undefined) clearTimeout(timer);
    this.timer = undefined;
    this.retryTimer = undefined;
    while (this.pending.length + this.pendingFirst.length > 0 || this.flushing.size > 0) {
      this.retryNow();
      await Promise.allSettled([...this.flushing]);
    }
  }

  /** Every free slot takes a batch of what waits (the refused batch first). */
  private retryNow(): void {
    while (this.inFlight < this.options.maxConcurrent && this.pending.length + this.pendingFirst.length > 0) void this.flush();
  }

  /** While every transaction slot is busy, units gather for the next one; a stalled batch waits for its retry timer. */
  private schedule(): void {
    if (this.retryTimer !== undefined || this.inFlight >= this.options.maxConcurrent) return;
    // Closing: nothing gathers any more, close() takes what is left at once.
    if (this.closed) return;
    if (this.pending.length + this.pendingFirst.length >= this.options.maxBatch) {
      void this.flush();
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.options.maxDelayMs);
  }

  /** One transaction over what waits, tracked until it ends (close waits for it). */
  private flush(): Promise<void> {
    const running = this.flushOnce();
    this.flushing.add(running);
    void running.finally(() => this.flushing.delete(running));
    return running;
  }

  private async flushOnce(): Promise<void> {
    if (this.inFlight >= this.options.maxConcurrent) return;
    const batch = this.take();
    if (batch.length === 0) return;
    this.inFlight++;
    // A free slot takes what is left at once when a full batch is still waiting.
    if (this.pending.length + this.pendingFirst.length > 0) this.schedule();
    try {
      await this.commit(batch);
    } finally {
      this.inFlight--;
      if (this.pending.length + this.pendingFirst.length > 0) this.schedule();
    }
  }

  /** Up to maxBatch queued units, outcomes first; the rest stay queued in order. */
  private take(): Pending[] {
    const queued = [...this.pendingFirst, ...this.pending];
    const batch = queued.slice(0, this.options.maxBatch);
    const rest = queued.slice(this.options.maxBatch);
    this.pendingFirst = rest.filter((p) => p.first);
    this.pending = rest.filter((p) => !p.first);
    return batch;
  }

  private async commit(batch: readonly Pending[]): Promise<void> {
    try {
      await this.runInOne(batch);
      this.committed(batch);
    } catch (err) {
      if (this.retryable(err)) {
        this.stall(batch, err);
        return;
      }
      if (batch.length === 1) {
        batch[0]?.reject(err);
        return;
      }
      await this.oneByOne(batch);
    }
  }

  private async runInOne(batch: readonly Pending[]): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      let i = 0;
      while (i < batch.length) {
        const p = batch[i] as Pending;
        if (p.group === undefined) {
          p.result = await p.run?.(client);
          i++;
          continue;
        }
        let end = i + 1;
        while (end < batch.length && (batch[end] as Pending).group === p.group) end++;
        const members = batch.slice(i, end);
        const results = await p.group.apply(client, members.map((m) => m.item));
        if (results.length !== members.length) throw new Error(`a write group returned ${results.length} results for ${members.length} items`);
        members.forEach((m, k) => {
          m.result = results[k];
        });
        i = end;
      }
    });
  }

  /** After a failure no retry cures: each unit alone; a passing failure stalls the rest. */
  private async oneByOne(batch: readonly Pending[]): Promise<void> {
    for (const [i, p] of batch.entries()) {
      try {
        await this.runInOne([p]);
        this.committed([p]);
      } catch (err) {
        if (this.retryable(err)) {
          this.stall(batch.slice(i), err);
          return;
        }
        p.reject(err);
      }
    }
  }

  private retryable(err: unknown): boolean {
    return isTransientStoreFailure(err) && !this.closed;
  }

  private committed(batch: readonly Pending[]): void {
    this.commits++;
    if (this.consecutiveFailures > 0) {
      this.failureLog.recovered({ failedCommits: this.consecutiveFailures });
      this.consecutiveFailures = 0;
    }
    for (const p of batch) p.resolve(p.result);
  }

  /** Keeps a refused batch at the head of the queue and schedules its retry with backoff. */
  private stall(batch: readonly Pending[], err: unknown): void {
    this.failedCommits++;
    this.consecutiveFailures++;
    this.pendingFirst = [...batch.filter((p) => p.first), ...this.pendingFirst];
    this.pending = [...batch.filter((p) => !p.first), ...this.pending];
    this.failureLog.failed(err, { writes: batch.length });
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    // Another batch that failed at the same time joins the retry already scheduled.
    if (this.retryTimer !== undefined) return;
    const delayMs = backoffDelayMs(this.consecutiveFailures, this.options.retryBaseDelayMs, this.options.retryMaxDelayMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.retryNow();
    }, delayMs);
  }
}
