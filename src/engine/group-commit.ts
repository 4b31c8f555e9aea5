/**
 * Group commit: many small writes (one per submit outcome or receipt) share one SQLite
 * transaction, so a synchronous=FULL fsync is paid per batch instead of per row. Each caller's
 * promise settles only after its item's transaction committed: a receipt is acknowledged to the
 * SMSC, and a submit's queue slot freed, only once its state is on disk.
 */
import type { SqliteDatabase } from '../store/database.js';

interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class GroupCommit<T> {
  private waiting: Waiting<T>[] = [];
  private scheduled = false;
  private flushed: Promise<void> = Promise.resolve();

  /**
   * @param apply writes a batch; runs inside one transaction
   * @param afterCommit runs after each committed batch (e.g. wake the webhook sender)
   */
  constructor(
    private readonly db: SqliteDatabase,
    private readonly apply: (items: readonly T[]) => void,
    private readonly afterCommit: () => void = () => {},
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // setImmediate, not a microtask: lets every outcome that arrived in this I/O turn join the batch.
        this.flushed = new Promise((done) => setImmediate(() => done(this.flush())));
      }
    });
  }

  /** Resolves once everything added so far has been written (or failed). */
  async drain(): Promise<void> {
    while (this.scheduled) await this.flushed;
  }

  private flush(): void {
    const batch = this.waiting;
    this.waiting = [];
    this.scheduled = false;
    if (batch.length === 0) return;
    try {
      this.db.transaction(() => this.apply(batch.map((w) => w.item)))();
      for (const w of batch) w.resolve();
    } catch (err) {
      if (batch.length === 1) {
        batch[0]?.reject(err);
      } else {
        // One bad item must not fail its neighbours: write each on its own.
        for (const w of batch) {
          try {
            this.db.transaction(() => this.apply([w.item]))();
            w.resolve();
          } catch (itemErr) {
            w.reject(itemErr);
          }
        }
      }
    }
    this.afterCommit();
  }
}
