/**
 * A transaction committed without an fsync of its own, for writes nobody is told about until a
 * later synchronous=FULL commit on the same connection.
 *
 * Why it loses nothing: in WAL mode a commit appends its frames to the -wal file, and
 * synchronous=FULL fsyncs that file at the commit (synchronous=NORMAL does not). An fsync covers
 * the whole file, so the next FULL commit makes every frame before it durable too, this
 * transaction's included (and a checkpoint syncs the WAL before it copies frames into the database,
 * https://www.sqlite.org/pragma.html#pragma_synchronous). A large campaign request is stored as
 * hundreds of slices and then its campaign row; only the row's commit needs its own fsync, because
 * the 202 waits for it alone, and a crash before it leaves slices without a campaign, which are
 * deleted at the next start whether or not they reached the disk. At 1,000,000 recipients that is
 * one fsync instead of 501 before the 202 (each 5-30 ms on the build machine, all on the event loop).
 *
 * The connection's level is put back before this returns: better-sqlite3 is synchronous, so no
 * other transaction on the connection can commit in between.
 */
import type { SqliteDatabase } from './database.js';

/** PRAGMA synchronous's numeric levels (OFF 0, NORMAL 1, FULL 2, EXTRA 3). */
const NORMAL = 1;

export function commitWithoutOwnSync<T>(db: SqliteDatabase, transaction: () => T): T {
  // Inside an open transaction the level cannot change; the outer commit decides.
  if (db.inTransaction) return transaction();
  const level = db.pragma('synchronous', { simple: true }) as number;
  if (level <= NORMAL) return transaction();
  db.pragma(`synchronous = ${NORMAL}`);
  try {
    return transaction();
  } finally {
    db.pragma(`synchronous = ${level}`);
  }
}

/** Thrown inside a deferred transaction to roll it back when its result turns out to need its own fsync. */
class OwnSyncNeeded extends Error {}

/**
 * Transactions of one kind (e.g. the engine's materialise passes) committed without an fsync of
 * their own unless what one wrote needs it (`needsOwnSync` of its result): such a transaction is
 * rolled back and run again at the connection's own level, and the next one then starts at that
 * level until one does not need it (so a run of them costs at most one pass twice). Whether a
 * transaction needs its own fsync is known only once it has planned its writes, and
 * PRAGMA synchronous cannot change inside a transaction ("Safety level may not be changed inside
 * a transaction"), hence the rollback. `work` must be safe to run twice: it runs inside a
 * transaction, so its first run's writes are gone when it runs again.
 */
export class CommitDeferredUnless<T> {
  private lastNeededOwnSync = false;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly needsOwnSync: (result: T) => boolean,
  ) {}

  run(work: () => T): T {
    if (!this.lastNeededOwnSync) {
      try {
        return commitWithoutOwnSync(this.db, () => this.db.transaction(() => {
          const result = work();
          if (this.needsOwnSync(result)) throw new OwnSyncNeeded();
          return result;
        })());
      } catch (err) {
        if (!(err instanceof OwnSyncNeeded)) throw err;
      }
    }
    const result = this.db.transaction(work)();
    this.lastNeededOwnSync = this.needsOwnSync(result);
    return result;
  }
}
