/** Test support: records the PRAGMA synchronous statements a SQLite connection is given or asked. */
import type { Store } from '../../src/store/sqlite/database.js';

/** Every PRAGMA synchronous the connection is given or asked for, in order (the array fills as they run). */
export function recordSyncPragmas(db: Store['db']): string[] {
  const seen: string[] = [];
  const pragma = db.pragma.bind(db);
  db.pragma = ((source: string, options?: { simple?: boolean }) => {
    if (source.startsWith('synchronous')) seen.push(source);
    return pragma(source, options);
  }) as typeof db.pragma;
  return seen;
}
