import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WriteBatcher } from '../../src/engine/write-batcher.js';

let dir: string;
let db: Database.Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-batcher-'));
  db = new Database(join(dir, 'b.sqlite'));
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)');
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const insert = (v: string) => () => void db.prepare('INSERT INTO t (v) VALUES (?)').run(v);
const count = (): number => (db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n;

describe('WriteBatcher', () => {
  it('commits writes queued together in one transaction, and resolves only after the commit', async () => {
    const batcher = new WriteBatcher(db, { maxDelayMs: 5 });
    const done = [batcher.run(insert('a')), batcher.run(insert('b')), batcher.run(insert('c'))];
    expect(count()).toBe(0);
    await Promise.all(done);
    expect(count()).toBe(3);
    expect(batcher.commits).toBe(1);
  });

  it('runs writes marked first before the others of their batch', async () => {
    const batcher = new WriteBatcher(db, { maxDelayMs: 5 });
    const order: string[] = [];
    await Promise.all([
      batcher.run(() => order.push('receipt')),
      batcher.run(() => order.push('outcome'), { first: true }),
      batcher.run(() => order.push('receipt 2')),
    ]);
    expect(order).toEqual(['outcome', 'receipt', 'receipt 2']);
  });

  it('commits at once when a batch reaches maxBatch', async () => {
    const batcher = new WriteBatcher(db, { maxDelayMs: 60_000, maxBatch: 2 });
    const first = batcher.run(insert('a'));
    const second = batcher.run(insert('b'));
    await Promise.all([first, second]);
    expect(count()).toBe(2);
  });

  it('lets writes queued by promise continuations of the same tick join a full batch, first ones first', async () => {
    const batcher = new WriteBatcher(db, { maxDelayMs: 60_000, maxBatch: 2 });
    const order: string[] = [];
    // As one socket read does: receipts queued synchronously fill the batch, and the submit outcome
    // resolved by the same read is queued a few promise hops later.
    const outcome = Promise.resolve()
      .then(() => undefined)
      .then(() => batcher.run(() => order.push('outcome'), { first: true }));
    const receipts = [batcher.run(() => order.push('receipt 1')), batcher.run(() => order.push('receipt 2'))];
    await Promise.all([...receipts, outcome]);
    expect(order).toEqual(['outcome', 'receipt 1', 'receipt 2']);
    expect(batcher.commits).toBe(1);
  });

  it('rejects only the failing write of a batch; its neighbours commit', async () => {
    const batcher = new WriteBatcher(db, { maxDelayMs: 1 });
    const results = await Promise.allSettled([batcher.run(insert('x')), batcher.run(insert('x')), batcher.run(insert('y'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(count()).toBe(2);
  });

  it('runs commit hooks after each commit and flushes on demand', async () => {
    const batcher = new WriteBatcher(db, { maxDelayMs: 60_000 });
    let hooks = 0;
    batcher.onCommit(() => hooks++);
    const pending = batcher.run(insert('a'));
    batcher.flush();
    await pending;
    expect(count()).toBe(1);
    expect(hooks).toBe(1);
  });
});
