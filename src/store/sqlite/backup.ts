/**
 * An online backup of the SQLite database through SQLite's backup API (better-sqlite3's backup()),
 * safe while `smsgate serve` writes to it. The copy is taken from one read snapshot: a read
 * transaction is held on the source connection for the whole copy, so writes by other connections
 * (the server) neither restart the copy (SQLite restarts a backup whose source changed between
 * steps) nor end up half in it; in WAL mode the server's writes are not blocked meanwhile.
 * The copy is written beside the destination and renamed into place only when complete. It holds
 * what the database holds (token hashes, encrypted secrets), so it is created 0600 like the
 * database itself, whatever the umask.
 */
import { closeSync, existsSync, openSync, renameSync, rmSync } from 'node:fs';
import { GatewayError } from '../../common/errors.js';
import type { SqliteDatabase } from './database.js';

export interface BackupProgress { totalPages: number; copiedPages: number }

export interface BackupResult { file: string; totalPages: number; pageSizeBytes: number; bytes: number }

/** Pages copied per step: 1,000 pages of 4 KiB is 4 MiB between progress reports. */
export const BACKUP_PAGES_PER_STEP = 1_000;

export async function backupDatabase(db: SqliteDatabase, file: string, onProgress?: (progress: BackupProgress) => void): Promise<BackupResult> {
  if (existsSync(file)) throw new GatewayError('BACKUP_EXISTS', `${file} exists already: give a new file name (a backup never overwrites)`);
  const partial = `${file}.partial-${process.pid}`;
  // SQLite opens an existing empty file as an empty database and keeps its mode (its journal takes it too).
  rmSync(partial, { force: true });
  closeSync(openSync(partial, 'wx', 0o600));
  db.exec('BEGIN');
  try {
    // The first read starts the snapshot the whole copy is taken from.
    db.prepare('SELECT COUNT(*) FROM sqlite_master').get();
    const { totalPages } = await db.backup(partial, {
      progress({ totalPages: total, remainingPages }) {
        onProgress?.({ totalPages: total, copiedPages: total - remainingPages });
        return BACKUP_PAGES_PER_STEP;
      },
    });
    // better-sqlite3 reports before each step; the last step's completion is reported here.
    onProgress?.({ totalPages, copiedPages: totalPages });
    const pageSizeBytes = db.pragma('page_size', { simple: true }) as number;
    renameSync(partial, file);
    return { file, totalPages, pageSizeBytes, bytes: totalPages * pageSizeBytes };
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  } finally {
    db.exec('COMMIT');
  }
}
