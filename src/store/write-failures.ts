/**
 * Which store failures a retry can cure: the one classification of "the database cannot serve
 * now" that the engine (keep the batch, try again), the campaign processor and the HTTP API (503
 * with Retry-After, never 500: api/http-errors.ts) all ask.
 *
 * SQLite: a full disk (SQLITE_FULL), an I/O error (SQLITE_IOERR_*), another connection holding a
 * lock past busy_timeout (SQLITE_BUSY/LOCKED), memory pressure and a file made read-only under us
 * are conditions of the machine: the same write succeeds once they pass, so the engine keeps such a
 * batch and tries again. better-sqlite3 puts SQLite's (extended) result code name in `err.code`,
 * e.g. SQLITE_READONLY_DBMOVED. So is a database file deleted or replaced under the gateway
 * (DATABASE_FILE_MOVED): the batch is kept, never marked failed, until the operator restarts.
 *
 * PostgreSQL (a database that drops connections, fails over, is stopped or fills its disk): `pg`
 * puts the SQLSTATE in `err.code` (PostgreSQL manual, Appendix A): any connection exception (class
 * 08), insufficient resources (class 53: 53100 disk_full, 53300 too_many_connections), operator
 * intervention (class 57: 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now,
 * 57014 query_canceled by a statement timeout), a transaction the server aborted to resolve a
 * conflict (40001 serialization_failure, 40P01 deadlock_detected), 55P03 lock_not_available, 25006
 * read_only_sql_transaction (a replica promoted under us), and a session the server ended because
 * it sat in a transaction past IDLE_IN_TRANSACTION_TIMEOUT_MS (25P03: this process was frozen).
 * When the server is not there at all `pg` passes on Node's socket errno names. A connection lost
 * mid-query, or a pool that timed out connecting, carries no code, so pg's messages for that are
 * recognised too.
 *
 * An error wrapping one of these (`cause`, as GatewayError does) is one of these.
 * Anything else (a constraint, a malformed statement) fails the same way every time and is the
 * caller's to report.
 */
const TRANSIENT_SQLITE_CODE = /^SQLITE_(FULL|IOERR|BUSY|LOCKED|NOMEM|READONLY|CANTOPEN|PROTOCOL)(_|$)|^DATABASE_FILE_MOVED$/;

/** SQLSTATE classes a retry can cure (see above). */
const TRANSIENT_PG_CLASS = /^(08|53|57)[0-9A-Z]{3}$/;

/** Single SQLSTATEs and Node socket errors a retry can cure. */
const TRANSIENT_PG_CODE = /^(25P03|25006|40001|40P01|55P03|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)$/;

/** pg's errors for a connection that is gone or never came (they carry no code). */
const LOST_CONNECTION_MESSAGE = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable|Connection ended unexpectedly)/;

/** How deep a `cause` chain is followed: wrappers are one or two deep; a cycle must not loop. */
const MAX_CAUSE_DEPTH = 4;

function codeOf(err: object): string | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** A PostgreSQL (or socket) failure a later retry can cure, on this error itself. */
export function isTransientPostgresFailure(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = codeOf(err);
  if (code !== undefined) return TRANSIENT_PG_CODE.test(code) || TRANSIENT_PG_CLASS.test(code);
  const message = (err as { message?: unknown }).message;
  return typeof message === 'string' && LOST_CONNECTION_MESSAGE.test(message);
}

function isTransientHere(err: object): boolean {
  const code = codeOf(err);
  if (code !== undefined && TRANSIENT_SQLITE_CODE.test(code)) return true;
  return isTransientPostgresFailure(err);
}

export function isTransientStoreFailure(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && typeof current === 'object' && current !== null; depth++) {
    if (isTransientHere(current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
