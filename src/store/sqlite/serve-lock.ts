/**
 * One writer per SQLite file (ARCHITECTURE "Stores and nodes"): a second gateway
 * on the same database would claim and send the same parts and webhooks. The gateway takes this
 * lock before it opens the database and holds it until it stops.
 *
 * The lock is an OS lock, not a pid check: `<database>.lock` is a tiny SQLite file (rollback
 * journal) on which the holder keeps a write transaction open (BEGIN IMMEDIATE: SQLite's RESERVED
 * lock, a POSIX fcntl lock underneath). The kernel drops it when the process ends however it ends,
 * so a `kill -9`ed serve never blocks its restart, and a reused pid cannot fool it. Who holds it
 * (pid, host, since) is a row committed in the same file just before the lock is taken; other
 * processes can still read it, so the one refused names the holder. Admin commands open the
 * database without this lock: SQLite's WAL lets them write beside a running serve.
 * Like SQLite itself, this needs a local file system (fcntl locks are unreliable over NFS).
 *
 * PostgreSQL (`database.url`) is the opposite: every `serve` on it is a node of one
 * cluster by design, coordinated in the database (nodes, leases, SKIP LOCKED claims), so its guard
 * (serveGuardFor) takes no lock.
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { DatabaseTarget } from '../../config/database.js';
import { GatewayError } from '../../common/errors.js';
import { isStoreWriteRefusal } from '../write-refusal.js';

export interface ServeLockHolder {
  pid: number;
  host: string;
  since: string;
}

/** The lock file that goes with a database: `data/smsgate.sqlite` -> `data/smsgate.sqlite.lock`. */
export function serveLockPathFor(databasePath: string): string {
  return `${databasePath}.lock`;
}

/** How long a reader waits for the holder's short commit of its row (not for the lock itself). */
const READ_BUSY_TIMEOUT_MS = 500;

export class ServeLock {
  private constructor(
    private readonly db: Database.Database | undefined,
    readonly path: string,
  ) {}

  /**
   * Takes the lock for `databasePath` or throws GatewayError DATABASE_IN_USE naming the database
   * and the holder. Never waits for the holder: a second serve is refused at once.
   */
  static acquire(databasePath: string, now: () => number = Date.now): ServeLock {
    if (databasePath === ':memory:') return new ServeLock(undefined, ':memory:');
    const path = serveLockPathFor(databasePath);
    mkdirSync(dirname(path), { recursive: true });
    // Created 0600 before SQLite opens it (SQLite would make it 0644); an existing file is left as it is.
    closeSync(openSync(path, 'a', 0o600));
    const db = new Database(path, { timeout: READ_BUSY_TIMEOUT_MS });
    try {
      db.exec(`CREATE TABLE IF NOT EXISTS serve_lock_holder (
        id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, host TEXT NOT NULL, since TEXT NOT NULL)`);
      const me: ServeLockHolder = { pid: process.pid, host: hostname(), since: new Date(now()).toISOString() };
      // Commit who we are, then take the lock for good. Two starts racing between those steps:
      // the one that holds the lock afterwards writes itself again (bounded), the other is refused.
      for (let attempt = 0; attempt < 3; attempt++) {
        if (!tryBeginImmediate(db)) throw inUse(databasePath, path, readHolder(db));
        db.prepare('INSERT OR REPLACE INTO serve_lock_holder (id, pid, host, since) VALUES (1, ?, ?, ?)').run(me.pid, me.host, me.since);
        db.exec('COMMIT');
        if (!tryBeginImmediate(db)) throw inUse(databasePath, path, readHolder(db));
        const holder = readHolder(db);
        if (holder?.pid === me.pid && holder.host === me.host) return new ServeLock(db, path);
        db.exec('ROLLBACK');
      }
      throw inUse(databasePath, path, readHolder(db));
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /** Releases the lock (a clean stop also clears the holder row). Safe to call twice. */
  release(): void {
    const db = this.db;
    if (db === undefined || !db.open) return;
    try {
      if (db.inTransaction) {
        db.prepare('DELETE FROM serve_lock_holder').run();
        db.exec('COMMIT');
      }
    } catch (err) {
      // The lock file deleted under us (`rm gw.sqlite*` takes it too: SQLITE_READONLY_DBMOVED) or
      // the disk full: closing below releases the lock all the same; the holder row only names it.
      if (!isStoreWriteRefusal(err)) throw err;
    } finally {
      db.close();
    }
  }
}

/**
 * The serve holding the lock of `databasePath` now (pid, host, since), or undefined when none
 * does (no lock file, or a lock nobody holds: a stopped or killed serve). `smsgate config reload`
 * signals that pid when the serve's admin listener does not answer.
 */
export function currentServeLockHolder(databasePath: string): ServeLockHolder | undefined {
  if (databasePath === ':memory:') return undefined;
  const path = serveLockPathFor(databasePath);
  let db: Database.Database;
  try {
    db = new Database(path, { fileMustExist: true, timeout: READ_BUSY_TIMEOUT_MS });
  } catch {
    return undefined;
  }
  try {
    if (tryBeginImmediate(db)) {
      // We got the lock: nobody holds it, whatever the row says.
      db.exec('ROLLBACK');
      return undefined;
    }
    return readHolder(db);
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}

/** BEGIN IMMEDIATE without waiting: false when another connection holds the lock. */
function tryBeginImmediate(db: Database.Database): boolean {
  db.pragma('busy_timeout = 0');
  try {
    db.exec('BEGIN IMMEDIATE');
    return true;
  } catch (err) {
    if ((err as { code?: unknown }).code === 'SQLITE_BUSY') return false;
    throw err;
  } finally {
    db.pragma(`busy_timeout = ${READ_BUSY_TIMEOUT_MS}`);
  }
}

function readHolder(db: Database.Database): ServeLockHolder | undefined {
  return db.prepare('SELECT pid, host, since FROM serve_lock_holder WHERE id = 1').get() as ServeLockHolder | undefined;
}

function inUse(databasePath: string, lockPath: string, holder: ServeLockHolder | undefined): GatewayError {
  const self = holder !== undefined && holder.pid === process.pid && holder.host === hostname();
  const who =
    holder === undefined || self
      ? 'another process (it started at the same moment)'
      : `pid ${holder.pid} on host ${holder.host} (since ${holder.since})`;
  return new GatewayError(
    'DATABASE_IN_USE',
    `database ${databasePath} is in use by ${who}: one smsgate serve per SQLite file (lock ${lockPath}). Stop that one first, or give this one another database.path`,
    { details: { database: databasePath, lock: lockPath, ...(holder === undefined || self ? {} : { holder }) } },
  );
}

/** What the composition root holds while serving and releases when it stops. */
export interface ServeGuard {
  release(): void;
}

/**
 * The serve guard of the configured backend: SQLite's file lock (refused at once when another
 * serve holds it), or nothing for PostgreSQL, whose nodes share the database.
 */
export function serveGuardFor(target: DatabaseTarget, now: () => number = Date.now): ServeGuard {
  if (target.kind === 'postgres') return { release() {} };
  return ServeLock.acquire(target.path, now);
}
