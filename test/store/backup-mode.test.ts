/**
 * `smsgate db backup` writes a copy of everything the database holds (token hashes, encrypted
 * webhook secrets), so the copy is 0600 like the database, also under the usual
 * umask 022, under which SQLite alone makes 0644 files.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backupDatabase } from '../../src/store/sqlite/backup.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8);

describe('db backup file mode', () => {
  let dir: string;
  let store: Store;
  let previousUmask: number;

  beforeEach(async () => {
    previousUmask = process.umask(0o022);
    dir = mkdtempSync(join(tmpdir(), 'smsgate-backup-mode-'));
    store = await openStore({ path: join(dir, 'gate.sqlite') });
    store.db.prepare(`INSERT INTO clients (name, created_at) VALUES ('acme', 0)`).run();
  });
  afterEach(async () => {
    await store.close();
    process.umask(previousUmask);
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the copy 0600 and complete', async () => {
    expect(modeOf(join(dir, 'gate.sqlite'))).toBe('600');
    const file = join(dir, 'copy.sqlite');
    const result = await backupDatabase(store.db, file);
    expect(modeOf(file)).toBe('600');
    const copy = new Database(file, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(copy.prepare('SELECT name FROM clients').pluck().all()).toEqual(['acme']);
      expect(result.bytes).toBe(statSync(file).size);
    } finally {
      copy.close();
    }
  });
});
