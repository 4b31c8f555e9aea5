/**
 * Whether an error is a UNIQUE constraint refusing a duplicate, on either backend: better-sqlite3
 * names SQLite's extended code (SQLITE_CONSTRAINT_UNIQUE); PostgreSQL's SQLSTATE for
 * unique_violation is 23505 (PostgreSQL manual, Appendix A), which `pg` puts in `err.code` too.
 * Callers turn it into their coded error (CLIENT_EXISTS, USER_EXISTS, SENDER_EXISTS).
 */
const UNIQUE_VIOLATION_CODES: ReadonlySet<string> = new Set(['SQLITE_CONSTRAINT_UNIQUE', '23505']);

export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && UNIQUE_VIOLATION_CODES.has(code);
}
