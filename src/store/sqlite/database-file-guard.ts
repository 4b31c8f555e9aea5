/**
 * Notices that the SQLite file at database.path is no longer the file the gateway has open.
 *
 * A process keeps writing to a file it opened after the file was unlinked (`rm gw.sqlite*`) or
 * replaced (a restore moved over it): SQLite's commits succeed, into an inode nobody will open again,
 * so every 202 given from then on is lost at the next start. SQLite's own check
 * (SQLITE_READONLY_DBMOVED) runs only when a rollback journal is opened, never in WAL mode.
 * The guard compares the device and inode of the path with those of the file as opened:
 * - before every commit (guardTransactions: the check runs inside the transaction, so a write to a
 *   moved file is rolled back and refused, never acknowledged). One stat per transaction, not per row:
 *   a stat costs microseconds against a commit's fsync.
 * - at the readiness probe (GET /ready), so /ready turns 503 without waiting for a write;
 * - every FILE_CHECK_INTERVAL_MS on a timer, so writes outside a transaction are refused too
 *   (`PRAGMA query_only`) and the operator is told once, even on an idle gateway.
 * Once moved, the guard stays moved: the open file can never become the path's file again, and only
 * a restart (on a restored file) resumes writing.
 */
import { statSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import { GatewayError } from '../../common/errors.js';

/** How often the timer compares the path with the open file when nothing writes. */
export const FILE_CHECK_INTERVAL_MS = 500;

export interface FileIdentity {
  readonly dev: bigint;
  readonly ino: bigint;
}

export type FileChange = 'unchanged' | 'vanished' | 'replaced';

/** Pure: how the path's file now (undefined: no file there) differs from the file as opened. */
export function compareFileIdentity(opened: FileIdentity, current: FileIdentity | undefined): FileChange {
  if (current === undefined) return 'vanished';
  return current.dev === opened.dev && current.ino === opened.ino ? 'unchanged' : 'replaced';
}

/** The identity of the file at `path` now, or undefined when there is none. */
export function fileIdentityOf(path: string): FileIdentity | undefined {
  const stat = statSync(path, { bigint: true, throwIfNoEntry: false });
  return stat === undefined ? undefined : { dev: stat.dev, ino: stat.ino };
}

export class DatabaseFileGuard {
  private moved: GatewayError | undefined;
  private readonly listeners: ((problem: GatewayError) => void)[] = [];
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    readonly path: string,
    private readonly opened: FileIdentity,
    private readonly identityNow: (path: string) => FileIdentity | undefined,
  ) {}

  /** Records the identity of the file at `path` as it is now (just after SQLite opened it). */
  static of(path: string, identityNow: (path: string) => FileIdentity | undefined = fileIdentityOf): DatabaseFileGuard {
    const opened = identityNow(path);
    if (opened === undefined) throw new GatewayError('DATABASE_NOT_FOUND', `no database at ${path} (database.path)`);
    return new DatabaseFileGuard(path, opened, identityNow);
  }

  /** Compares now (one stat); the coded problem once the file vanished or was replaced, else undefined. */
  check(): GatewayError | undefined {
    if (this.moved !== undefined) return this.moved;
    const change = compareFileIdentity(this.opened, this.identityNow(this.path));
    if (change === 'unchanged') return undefined;
    const what = change === 'vanished' ? 'was deleted or moved away' : 'was replaced by another file';
    this.moved = new GatewayError(
      'DATABASE_FILE_MOVED',
      `the database file ${this.path} ${what} while the gateway had it open: writes are refused (nothing more is accepted into a file no one will read); ` +
        'restore the database (with its key file) and restart smsgate serve',
      { retryable: true },
    );
    for (const listener of this.listeners) listener(this.moved);
    return this.moved;
  }

  /** Throws the coded problem (a store write refusal: HTTP 503) when the file moved. */
  assertIntact(): void {
    const problem = this.check();
    if (problem !== undefined) throw problem;
  }

  /** Called once, when the move is first seen. */
  onMoved(listener: (problem: GatewayError) => void): void {
    this.listeners.push(listener);
  }

  /** Checks every FILE_CHECK_INTERVAL_MS until stop(); the timer never keeps the process alive. */
  watch(): void {
    this.timer ??= setInterval(() => this.check(), FILE_CHECK_INTERVAL_MS).unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * Makes every transaction on `db` check the guard just before it commits: better-sqlite3 has no
 * commit hook, and every write of the stores but single statements runs through db.transaction
 * (those are refused by `PRAGMA query_only`, set as soon as the move is seen). A throw inside the
 * transaction function rolls it back.
 */
export function guardTransactions(db: BetterSqlite3.Database, guard: DatabaseFileGuard): void {
  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: (...args: unknown[]) => unknown) =>
    transaction(function guarded(this: unknown, ...args: unknown[]): unknown {
      const result = fn.apply(this, args);
      guard.assertIntact();
      return result;
    })) as typeof db.transaction;
  guard.onMoved(() => {
    if (db.open) db.pragma('query_only = ON');
  });
}
