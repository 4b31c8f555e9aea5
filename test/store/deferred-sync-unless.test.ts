/**
 * Transactions committed without their own fsync unless their result needs it
 * (CommitDeferredUnless, src/store/sqlite/deferred-sync.ts), on a real SQLite file at
 * synchronous=FULL: which level each commit ran at (every PRAGMA synchronous the connection is
 * given), that a transaction that turns out to need its own fsync is rolled back and written once
 * at FULL, and that the connection is always left at FULL.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/sqlite/database.js';
import { CommitDeferredUnless } from '../../src/store/sqlite/deferred-sync.js';
import { recordSyncPragmas } from '../support/sync-pragmas.js';
import { useTempSqliteStore } from '../support/temp-sqlite-store.js';

const openTempStore = useTempSqliteStore('deferred-unless');

async function openFullStore(): Promise<Store['db']> {
  const store = await openTempStore({ synchronous: 'FULL' });
  store.db.exec('CREATE TABLE passes (id INTEGER PRIMARY KEY, urgent INTEGER NOT NULL)');
  return store.db;
}

describe('CommitDeferredUnless', () => {
  it('commits a transaction that does not need it at NORMAL, and one that does once at FULL; the next starts at FULL, then defers again', async () => {
    const db = await openFullStore();
    const seen = recordSyncPragmas(db);
    const commits = new CommitDeferredUnless<{ urgent: boolean }>(db, (r) => r.urgent);
    let runs = 0;
    const pass = (urgent: boolean) => (): { urgent: boolean } => {
      runs++;
      db.prepare('INSERT INTO passes (urgent) VALUES (?)').run(urgent ? 1 : 0);
      return { urgent };
    };

    commits.run(pass(false));
    expect(seen.splice(0)).toEqual(['synchronous', 'synchronous = 1', 'synchronous = 2']);
    expect(runs).toBe(1);

    // Planned at NORMAL, found to need its own fsync: rolled back, run again at FULL, written once.
    commits.run(pass(true));
    expect(seen.splice(0)).toEqual(['synchronous', 'synchronous = 1', 'synchronous = 2']);
    expect(runs).toBe(3);
    expect(db.prepare('SELECT COUNT(*) AS n FROM passes WHERE urgent = 1').get()).toEqual({ n: 1 });

    // After one that needed it the next runs at FULL straight away (no level change)...
    commits.run(pass(false));
    expect(seen.splice(0)).toEqual([]);
    expect(runs).toBe(4);
    // ...and once one did not need it, they defer again.
    commits.run(pass(false));
    expect(seen.splice(0)).toEqual(['synchronous', 'synchronous = 1', 'synchronous = 2']);
    expect(db.prepare('SELECT COUNT(*) AS n FROM passes').get()).toEqual({ n: 4 });
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
  });

  it('leaves the level alone inside an open transaction (it cannot change there; the outer commit decides)', async () => {
    const db = await openFullStore();
    const seen = recordSyncPragmas(db);
    const commits = new CommitDeferredUnless<{ urgent: boolean }>(db, (r) => r.urgent);
    db.transaction(() => {
      commits.run(() => {
        db.prepare('INSERT INTO passes (urgent) VALUES (0)').run();
        return { urgent: false };
      });
    })();
    expect(seen).toEqual([]);
    expect(db.prepare('SELECT COUNT(*) AS n FROM passes').get()).toEqual({ n: 1 });
  });

  it('rethrows any other failure with the transaction rolled back and the connection at FULL', async () => {
    const db = await openFullStore();
    const commits = new CommitDeferredUnless<{ urgent: boolean }>(db, (r) => r.urgent);
    expect(() => commits.run(() => {
      db.prepare('INSERT INTO passes (urgent) VALUES (0)').run();
      throw new Error('write refused');
    })).toThrow('write refused');
    expect(db.prepare('SELECT COUNT(*) AS n FROM passes').get()).toEqual({ n: 0 });
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
  });
});
