/**
 * Which SQLite failures a retry can cure. A full disk (SQLITE_FULL), an I/O error (SQLITE_IOERR_*),
 * another connection holding a lock past busy_timeout (SQLITE_BUSY/LOCKED), memory pressure and a
 * file made read-only under us are conditions of the machine: the same write succeeds once they
 * pass, so the engine keeps such a batch and tries again. Anything else (a constraint, a
 * malformed statement) fails the same way every time and is the caller's to report.
 */
const TRANSIENT_CODE = /^SQLITE_(FULL|IOERR|BUSY|LOCKED|NOMEM|READONLY|CANTOPEN|PROTOCOL)(_|$)/;

export function isTransientStoreFailure(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && TRANSIENT_CODE.test(code);
}
