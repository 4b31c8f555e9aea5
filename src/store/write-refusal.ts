/**
 * Whether an error is the store refusing a write for a reason outside the request: the database is
 * busy or locked past the busy timeout, the disk or `max_page_count` is full, the file is read-only,
 * or an I/O error. Callers answer those "try again later" (HTTP 503 with Retry-After), never 500.
 * better-sqlite3 puts SQLite's (extended) result code name in `err.code`, e.g. SQLITE_READONLY_DBMOVED.
 * On PostgreSQL (issue 11) `pg` puts the SQLSTATE there instead: isPostgresRefusal.
 * DATABASE_FILE_MOVED is the gateway's own (src/store/database-file-guard.ts): the file at
 * database.path is no longer the one open, so a write would land in a file nobody will read again.
 */
const REFUSAL_CODE_PREFIXES: readonly string[] = [
  'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_FULL', 'SQLITE_READONLY', 'SQLITE_IOERR', 'SQLITE_CANTOPEN', 'SQLITE_PROTOCOL', 'DATABASE_FILE_MOVED',
];

/**
 * PostgreSQL manual, Appendix A: class 08 connection exception, 53 insufficient resources (53100
 * disk_full, 53300 too_many_connections), 57 operator intervention (57P01 admin_shutdown, 57P03
 * cannot_connect_now, 57014 query_canceled by a statement timeout).
 */
const PG_REFUSAL_CLASSES: ReadonlySet<string> = new Set(['08', '53', '57']);
/**
 * Single SQLSTATEs that a retry cures: 40001 serialization_failure, 40P01 deadlock_detected,
 * 55P03 lock_not_available, 25006 read_only_sql_transaction (a replica promoted under us); and the
 * socket errors `pg` passes on when the server is gone (Node's errno names).
 */
const PG_REFUSAL_CODES: ReadonlySet<string> = new Set(['40001', '40P01', '55P03', '25006', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
const SQLSTATE = /^[0-9A-Z]{5}$/;

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A PostgreSQL refusal a later retry can cure (see the two tables above). */
export function isPostgresRefusal(err: unknown): boolean {
  const code = codeOf(err);
  if (code === undefined) return false;
  return PG_REFUSAL_CODES.has(code) || (SQLSTATE.test(code) && PG_REFUSAL_CLASSES.has(code.slice(0, 2)));
}

export function isStoreWriteRefusal(err: unknown): boolean {
  const code = codeOf(err);
  if (code === undefined) return false;
  return REFUSAL_CODE_PREFIXES.some((prefix) => code === prefix || code.startsWith(`${prefix}_`)) || isPostgresRefusal(err);
}
