/**
 * Group commit for the engine's hot writes (submit outcomes, receipts): every write queued within
 * a short window runs in ONE SQLite transaction, so the commit's fsync (synchronous=FULL: about
 * 1.7 ms on this machine kind, and better-sqlite3 blocks the event loop while it runs) is paid per
 * batch instead of per row. Each caller's promise settles only after its write committed: a
 * receipt is acknowledged to the SMSC, and a submit's queue slot freed, once its state is on disk.
 */
import type { SqliteDatabase } from '../store/database.js';

export interface WriteBatcherOptions {
  /** How long the first write of a batch waits for company before the commit. */
  maxDelayMs?: number;
  /** A batch this large commits at once without waiting. */
  maxBatch?: number;
}

interface Pending {
  write: () => void;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export const WRITE_BATCH_DEFAULTS = { maxDelayMs: 2, maxBatch: 128 } as const;

export class WriteBatcher {
  private pending: Pending[] = [];
  /** Writes that go before the others of their batch (see run's `first`). */
  private pendingFirst: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private readonly afterCommitHooks: (() => void)[] = [];
  private commitTimed: (seconds: number) => void = () => {};
  private readonly maxDelayMs: number;
  private readonly maxBatch: number;
  /** Transactions committed since start (diagnostics and benches). */
  commits = 0;

  constructor(
    private readonly db: SqliteDatabase,
    options: WriteBatcherOptions = {},
  ) {
    this.maxDelayMs = options.maxDelayMs ?? WRITE_BATCH_DEFAULTS.maxDelayMs;
    this.maxBatch = options.maxBatch ?? WRITE_BATCH_DEFAULTS.maxBatch;
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
   */
  run(write: () => void, options: { first?: boolean } = {}): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      (options.first === true ? this.pendingFirst : this.pending).push({ write, resolve, reject });
      if (this.pending.length + this.pendingFirst.length >= this.maxBatch) this.flushSoon();
      else this.timer ??= setTimeout(() => this.flush(), this.maxDelayMs);
    });
  }

  /**
   * A full batch commits once the current I/O callbacks and their promise continuations have run,
   * not in the middle of them: one socket read can hold hundreds of PDUs, and a receipt handled
   * there must not commit before the submit outcome that the same read resolved (queued a few
   * promise hops later) joins the batch, or the receipt would be parked and matched later at
   * three times the writes. A batch may so grow past maxBatch by what one read brings.
   */
  private flushSoon(): void {
    this.immediate ??= setImmediate(() => this.flush());
  }

  /** Commits whatever is queued now. */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
    const batch = this.pendingFirst.length === 0 ? this.pending : [...this.pendingFirst, ...this.pending];
    this.pending = [];
    this.pendingFirst = [];
    if (batch.length === 0) return;
    try {
      const startedMs = performance.now();
      this.db.transaction(() => {
        for (const p of batch) p.write();
      })();
      this.commitTimed((performance.now() - startedMs) / 1_000);
      this.commits++;
      for (const p of batch) p.resolve();
    } catch (err) {
      if (batch.length === 1) batch[0]?.reject(err);
      else this.writeOneByOne(batch);
    }
    for (const hook of this.afterCommitHooks) hook();
  }

  /** One bad write must not fail its neighbours: after a failed batch, each gets its own transaction. */
  private writeOneByOne(batch: readonly Pending[]): void {
    for (const p of batch) {
      try {
        this.db.transaction(p.write)();
        this.commits++;
        p.resolve();
      } catch (err) {
        p.reject(err);
      }
    }
  }
}
