/**
 * Group commit for the engine's hot writes (submit outcomes, receipts): every write queued within
 * a short window runs in ONE SQLite transaction, so the commit's fsync (synchronous=FULL: about
 * 1.7 ms on this machine kind, and better-sqlite3 blocks the event loop while it runs) is paid per
 * batch instead of per row. Each caller's promise settles only after its write committed: a
 * receipt is acknowledged to the SMSC, and a submit's queue slot freed, once its state is on disk.
 *
 * A batch the store refuses for a passing reason (disk full, I/O error: isTransientStoreFailure)
 * is kept and tried again with backoff until it commits, with new writes joining it; its callers
 * simply wait. So a submit keeps its window slot and its part never stays 'submitting' behind a
 * failed write (a failed write used to free the slot and strand the part, and a
 * restart then sent such parts again). While stalled, `stalled` is true and the engine claims no
 * new parts; the failure is logged once, then at most every failureLogIntervalMs.
 */
import { GatewayError } from '../../common/errors.js';
import { silentLogger, type Logger } from '../../common/log.js';
import type { SqliteDatabase } from '../../store/sqlite/database.js';
import { isTransientStoreFailure } from '../../store/write-failures.js';
import { FAILURE_LOG_INTERVAL_MS, FailureLog } from '../../common/failure-log.js';
import { backoffDelayMs } from '../retry-policy.js';

export interface WriteBatcherOptions {
  /** How long the first write of a batch waits for company before the commit. */
  maxDelayMs?: number;
  /** A batch this large commits at once without waiting. */
  maxBatch?: number;
  /** Wait before the first retry of a batch the store refused; doubles per failure up to retryMaxDelayMs. */
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  logger?: Logger;
  /** At most one log line per this interval while the store keeps refusing. */
  failureLogIntervalMs?: number;
}

/**
 * Writes of one kind that are applied together: every item of the group queued next to each other
 * in a batch is handed to one `apply` call, so the store can use one statement for many rows
 * (a multi-row INSERT, one query for the whole batch) instead of one per item. `apply` runs
 * inside the batch's transaction and returns one result per item, in order. A batch the store
 * refused is applied again (with the same items); after a failure no retry can cure, each item is
 * applied alone in its own transaction, so one bad item does not fail its neighbours.
 */
export interface WriteGroup<I, R> {
  apply(items: readonly I[]): R[];
}

/**
 * One queued write. A plain class with fixed fields (no per-write closures or object spread):
 * the engine queues one per submit outcome and per receipt, so its shape is on the hot path.
 */
class Pending {
  /** What the run that committed returned (a group's result for this item). */
  result: unknown = undefined;
  constructor(
    /** A write of its own; undefined for an item of a group. */
    readonly write: (() => unknown) | undefined,
    readonly group: WriteGroup<unknown, unknown> | undefined,
    readonly item: unknown,
    readonly first: boolean,
    private readonly settle: (value: unknown) => void,
    readonly reject: (err: unknown) => void,
  ) {}

  resolve(): void {
    this.settle(this.result);
  }
}

export const WRITE_BATCH_DEFAULTS = { maxDelayMs: 2, maxBatch: 128, retryBaseDelayMs: 100, retryMaxDelayMs: 2_000 } as const;

export class WriteBatcher {
  private pending: Pending[] = [];
  /** Writes that go before the others of their batch (see run's `first`). */
  private pendingFirst: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly afterCommitHooks: (() => void)[] = [];
  private commitTimed: (seconds: number) => void = () => {};
  private readonly maxDelayMs: number;
  private readonly maxBatch: number;
  private readonly retryBaseDelayMs: number;
  private readonly retryMaxDelayMs: number;
  private readonly failureLog: FailureLog;
  /** Failed commit attempts since the last commit; > 0 means stalled. */
  private consecutiveFailures = 0;
  private closed = false;
  /** Transactions committed since start (diagnostics and benches). */
  commits = 0;
  /** Commit attempts the store refused for a passing reason (each was retried). */
  failedCommits = 0;

  constructor(
    private readonly db: SqliteDatabase,
    options: WriteBatcherOptions = {},
  ) {
    this.maxDelayMs = options.maxDelayMs ?? WRITE_BATCH_DEFAULTS.maxDelayMs;
    this.maxBatch = options.maxBatch ?? WRITE_BATCH_DEFAULTS.maxBatch;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? WRITE_BATCH_DEFAULTS.retryBaseDelayMs;
    this.retryMaxDelayMs = options.retryMaxDelayMs ?? WRITE_BATCH_DEFAULTS.retryMaxDelayMs;
    this.failureLog = new FailureLog(options.logger ?? silentLogger(), 'committing outcomes and receipts', options.failureLogIntervalMs ?? FAILURE_LOG_INTERVAL_MS);
  }

  /** True while the store refuses the batch (it is being retried): take no new work that needs writes. */
  get stalled(): boolean {
    return this.consecutiveFailures > 0;
  }

  /** Runs after every commit (outside the transaction), e.g. to wake the webhook sender. */
  onCommit(hook: () => void): void {
    this.afterCommitHooks.push(hook);
  }

  /** Told how long each batch's transaction took, start to commit (the admin's smsgate_db_commit_seconds). */
  onCommitTimed(observe: (seconds: number) => void): void {
    this.commitTimed = observe;
  }

  /**
   * Queues a synchronous write; resolves once the transaction holding it committed. `first` writes
   * run before the other writes of their batch: the engine queues submit outcomes that way, so a
   * receipt that arrived a moment before its submit_sm_resp finds the message id in the same batch.
   * Resolves with what `write` returned in the run that committed: a write may run more than once
   * (a refused batch is retried), so effects outside the database (counters, logs) belong after
   * the promise, not inside `write`.
   */
  run<T>(write: () => T, options: { first?: boolean } = {}): Promise<T> {
    return this.enqueue<T>(write, undefined, undefined, options.first === true);
  }

  /**
   * Queues one item of a group (see WriteGroup); resolves with its result once the transaction
   * holding it committed. Same ordering, retry and failure rules as run().
   */
  runInGroup<I, R>(group: WriteGroup<I, R>, item: I, options: { first?: boolean } = {}): Promise<R> {
    return this.enqueue<R>(undefined, group as WriteGroup<unknown, unknown>, item, options.first === true);
  }

  private enqueue<T>(write: (() => T) | undefined, group: WriteGroup<unknown, unknown> | undefined, item: unknown, first: boolean): Promise<T> {
    if (this.closed) return Promise.reject(new GatewayError('STORE_CLOSED', 'the write batcher is closed'));
    return new Promise<T>((resolve, reject) => {
      (first ? this.pendingFirst : this.pending).push(new Pending(write, group, item, first, resolve as (value: unknown) => void, reject));
      // While stalled the retry timer commits everything queued; no earlier attempt.
      if (this.stalled) return;
      if (this.pending.length + this.pendingFirst.length >= this.maxBatch) this.flushSoon();
      else this.timer ??= setTimeout(this.flushFromTimer, this.maxDelayMs);
    });
  }

  /** One bound callback for every batch's timer rather than a closure per batch. */
  private readonly flushFromTimer = (): void => this.flush();

  /**
   * A full batch commits once the current I/O callbacks and their promise continuations have run,
   * not in the middle of them: one socket read can hold hundreds of PDUs, and a receipt handled
   * there must not commit before the submit outcome that the same read resolved (queued a few
   * promise hops later) joins the batch, or the receipt would be stored unmatched and matched later at
   * three times the writes. A batch may so grow past maxBatch by what one read brings.
   */
  private flushSoon(): void {
    this.immediate ??= setImmediate(this.flushFromTimer);
  }

  /** Commits whatever is queued now (also during a stall: a retry without waiting for the backoff). */
  flush(): void {
    this.clearTimers();
    const batch = this.pendingFirst.length === 0 ? this.pending : [...this.pendingFirst, ...this.pending];
    this.pending = [];
    this.pendingFirst = [];
    if (batch.length === 0) return;
    let committed: boolean;
    try {
      const startedMs = performance.now();
      this.db.transaction(() => applyAll(batch))();
      this.commitTimed((performance.now() - startedMs) / 1_000);
      this.commits++;
      for (const p of batch) p.resolve();
      committed = true;
    } catch (err) {
      if (isTransientStoreFailure(err)) {
        this.stall(batch, err);
        return;
      }
      committed = this.writeOneByOne(batch, err);
    }
    if (!committed) return;
    // writeOneByOne may have committed some writes and stalled on the rest (retryTimer set).
    if (this.consecutiveFailures > 0 && this.retryTimer === undefined) {
      this.failureLog.recovered({ failedCommits: this.consecutiveFailures });
      this.consecutiveFailures = 0;
    }
    for (const hook of this.afterCommitHooks) hook();
  }

  /**
   * Stops retrying: every queued write is rejected with STORE_CLOSED (their callers treat that
   * as a write that never happened: parts still 'submitting' are requeued at the next start).
   */
  close(): void {
    this.closed = true;
    this.clearTimers();
    const left = [...this.pendingFirst, ...this.pending];
    this.pending = [];
    this.pendingFirst = [];
    for (const p of left) p.reject(new GatewayError('STORE_CLOSED', 'stopped before the store accepted this write'));
  }

  /**
   * One bad write must not fail its neighbours: after a batch failed for a reason a retry cannot
   * cure, each gets its own transaction. If the store then refuses for a passing reason, the rest
   * waits for the retry. Returns true when anything committed.
   */
  private writeOneByOne(batch: readonly Pending[], batchError: unknown): boolean {
    if (batch.length === 1) {
      batch[0]?.reject(batchError);
      return false;
    }
    let committed = false;
    for (const [i, p] of batch.entries()) {
      try {
        this.db.transaction(() => applyAll([p]))();
        this.commits++;
        p.resolve();
        committed = true;
      } catch (err) {
        if (isTransientStoreFailure(err)) {
          this.stall(batch.slice(i), err);
          return committed;
        }
        p.reject(err);
      }
    }
    return committed;
  }

  /** Keeps a refused batch at the head of the queue and schedules its retry with backoff. */
  private stall(batch: readonly Pending[], err: unknown): void {
    this.failedCommits++;
    this.consecutiveFailures++;
    this.pendingFirst = [...batch.filter((p) => p.first), ...this.pendingFirst];
    this.pending = [...batch.filter((p) => !p.first), ...this.pending];
    this.failureLog.failed(err, { writes: batch.length });
    const delayMs = backoffDelayMs(this.consecutiveFailures, this.retryBaseDelayMs, this.retryMaxDelayMs);
    this.retryTimer = setTimeout(this.flushFromTimer, delayMs);
  }

  private clearTimers(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }
}

/** Runs a batch's writes in order; consecutive items of one group go to one apply call. */
function applyAll(batch: readonly Pending[]): void {
  let i = 0;
  while (i < batch.length) {
    const p = batch[i] as Pending;
    if (p.group === undefined) {
      if (p.write !== undefined) p.result = p.write();
      i++;
      continue;
    }
    let end = i + 1;
    while (end < batch.length && (batch[end] as Pending).group === p.group) end++;
    const items: unknown[] = [];
    for (let k = i; k < end; k++) items.push((batch[k] as Pending).item);
    const results = p.group.apply(items);
    if (results.length !== items.length) throw new Error(`a write group returned ${results.length} results for ${items.length} items`);
    for (let k = i; k < end; k++) (batch[k] as Pending).result = results[k - i];
    i = end;
  }
}
