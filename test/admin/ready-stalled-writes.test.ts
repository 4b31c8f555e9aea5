/**
 * /ready's "database writable" also counts the engine's own writes. Found on a
 * full tmpfs: the engine's group commits failed with SQLITE_FULL for minutes (they
 * are retried, nothing new is claimed) while /ready answered 200 "writable", because its probe (one
 * page, rolled back) still fitted. Here the same state on a real SQLite file: PRAGMA max_page_count
 * caps the file at its size with two free pages left, so the probe's page fits and the engine
 * batcher's 200 KB commit gets SQLITE_FULL; once the cap is lifted the batch commits and /ready's
 * facts say writable again.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readiness } from '../../src/admin/readiness.js';
import { WriteBatcher } from '../../src/engine/sqlite/write-batcher.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { StatusQueries } from '../../src/store/sqlite/status-store.js';
import { asyncPort } from '../../src/store/ports.js';
import { tempDir, until } from '../e2e/e2e-setup.js';

describe('/ready while the engine cannot commit', () => {
  let dir: string;
  let store: Store;
  let batcher: WriteBatcher | undefined;

  beforeEach(async () => {
    dir = tempDir('ready-stalled');
    store = await openStore({ path: join(dir, 'smsgate.sqlite') });
  });
  afterEach(async () => {
    batcher?.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is not ready while the store refuses the engine writes, and ready again once they commit', async () => {
    const db = store.db;
    db.exec('CREATE TABLE qa_outcomes (b BLOB)');
    // Two free pages: room for the probe's one page, not for a 200 KB batch.
    db.exec('CREATE TABLE qa_pad (b BLOB)');
    db.prepare('INSERT INTO qa_pad VALUES (zeroblob(?))').run(db.pragma('page_size', { simple: true }) as number);
    db.exec('DROP TABLE qa_pad');
    expect(db.pragma('freelist_count', { simple: true })).toBeGreaterThanOrEqual(2);
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);

    batcher = new WriteBatcher(db, { retryBaseDelayMs: 20, retryMaxDelayMs: 50 });
    const committed = batcher.run(() => db.prepare('INSERT INTO qa_outcomes VALUES (zeroblob(200000))').run());
    const stalledBatcher = batcher;
    await until(async () => stalledBatcher.stalled, (stalled) => stalled, 10_000, 'the batch refused with SQLITE_FULL');

    // The probe alone would call this database writable.
    const status = asyncPort(new StatusQueries(db));
    expect(await status.probeWritable()).toEqual({ ok: true });
    const during = await readiness(status, [], () => stalledBatcher.stalled);
    expect(during.ready).toBe(false);
    expect(during.database).toBe('not-writable');
    expect(during.reasons).toContain("database not writable: the store refuses the engine's writes (disk full or I/O error); they are being retried");

    db.pragma(`max_page_count = ${pages * 100}`);
    await committed;
    const after = await readiness(status, [], () => stalledBatcher.stalled);
    expect(after.database).toBe('writable');
    expect(after.reasons.filter((r) => r.startsWith('database'))).toEqual([]);
  });
});
