/**
 * The client names of an existing SQLite database, read without changing anything (opened
 * read-only, never created or migrated): `config check` warns about route client names no client
 * has. Null when they cannot be read that way.
 */
import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';

export function readClientNames(path: string): Set<string> | null {
  if (!existsSync(path)) return null;
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
    return new Set(db.prepare<[], string>('SELECT name FROM clients').pluck().all());
  } catch {
    // Not an smsgate database yet (not migrated), locked, or unreadable: nothing to check against.
    return null;
  } finally {
    db?.close();
  }
}
