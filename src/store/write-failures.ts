/**
 * Which store failures a retry can cure.
 *
 * SQLite: a full disk (SQLITE_FULL), an I/O error (SQLITE_IOERR_*), another connection holding a
 * lock past busy_timeout (SQLITE_BUSY/LOCKED), memory pressure and a file made read-only under us
 * are conditions of the machine: the same write succeeds once they pass, so the engine keeps such a
 * batch and tries again. So is a database file deleted or replaced under the gateway
 * (DATABASE_FILE_MOVED): the batch is kept, never marked failed, until the operator restarts.
 *
 * PostgreSQL (issue 11: a database that drops connections or fails over): the connection refused or
 * reset, the server shutting down or not yet accepting (57P01 admin_shutdown, 57P02 crash_shutdown,
 * 57P03 cannot_connect_now), any connection exception (class 08), insufficient resources (class 53:
 * too many connections, disk full), and a transaction the server aborted to resolve a conflict
 * (40001 serialization_failure, 40P01 deadlock_detected), and a session the server ended because
 * it sat in a transaction past IDLE_IN_TRANSACTION_TIMEOUT_MS (25P03: this process was frozen). pg reports a connection lost mid-query
 * without a code, so its messages for that are recognised too.
 *
 * Anything else (a constraint, a malformed statement) fails the same way every time and is the
 * caller's to report.
 */
const TRANSIENT_SQLITE_CODE = /^SQLITE_(FULL|IOERR|BUSY|LOCKED|NOMEM|READONLY|CANTOPEN|PROTOCOL)(_|$)|^DATABASE_FILE_MOVED$/;

/** SQLSTATE codes (PostgreSQL Appendix A) and Node socket errors a retry can cure. */
const TRANSIENT_PG_CODE = /^(57P0[123]|25P03|08[0-9A-Z]{3}|53[0-9A-Z]{3}|40001|40P01|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)$/;

/** pg's errors for a connection that is gone or never came (they carry no code). */
const LOST_CONNECTION_MESSAGE = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable)/;

export function isTransientStoreFailure(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return TRANSIENT_SQLITE_CODE.test(code) || TRANSIENT_PG_CODE.test(code);
  const message = (err as { message?: unknown }).message;
  return typeof message === 'string' && LOST_CONNECTION_MESSAGE.test(message);
}
