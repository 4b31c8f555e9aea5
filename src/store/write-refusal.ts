/**
 * Whether an error is the store refusing a write for a reason outside the request: the database is
 * busy or locked past the busy timeout, the disk or `max_page_count` is full, the file is read-only,
 * or an I/O error. Callers answer those "try again later" (HTTP 503 with Retry-After), never 500.
 * better-sqlite3 puts SQLite's (extended) result code name in `err.code`, e.g. SQLITE_READONLY_DBMOVED.
 */
const REFUSAL_CODE_PREFIXES: readonly string[] = [
  'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_FULL', 'SQLITE_READONLY', 'SQLITE_IOERR', 'SQLITE_CANTOPEN', 'SQLITE_PROTOCOL',
];

export function isStoreWriteRefusal(err: unknown): boolean {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && REFUSAL_CODE_PREFIXES.some((prefix) => code === prefix || code.startsWith(`${prefix}_`));
}
