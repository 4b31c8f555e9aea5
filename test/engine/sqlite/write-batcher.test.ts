import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WriteBatcher, type WriteGroup } from '../../../src/engine/sqlite/write-batcher.js';
import { isGatewayError } from '../../../src/common/errors.js';
import { createLogger } from '../../../src/common/log.js';

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

/** Makes the file genuinely full: no page may be added (PRAGMA max_page_count), and the free room of the last pages is used up. */
function fillDatabase(): void {
  db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
  let i = 0;
  for (const padding of [200, 20, 0]) {
    for (;;) {
      try {
        db.prepare('INSERT INTO t (v) VALUES (?)').run(`filler-${i++}-${'x'.repeat(padding)}`);
      } catch (err) {
        expect((err as { code?: string }).code).toBe('SQLITE_FULL');
        break;
      }
    }
  }
}
const makeRoom = (): void => void db.pragma('max_page_count = 1073741823');
/** A row too large for whatever room a full file has left. */
const large = (v: string) => insert(`${v}${'-'.repeat(300)}`);

async function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function capturedLogger(): { logger: ReturnType<typeof createLogger>; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as { level: number; msg: string });
      callback();
    },
  });
  return { logger: createLogger({ level: 'info', destination }), lines };
}

describe('WriteBatcher when the store refuses a commit (disk full)', () => {
  it('keeps the batch, retries it with backoff and resolves its callers only once it committed', async () => {
    fillDatabase();
    const batcher = new WriteBatcher(db, { maxDelayMs: 1, retryBaseDelayMs: 5, retryMaxDelayMs: 20 });
    let settled = false;
    const done = Promise.all([batcher.run(large('a')), batcher.run(large('b'))]).finally(() => {
      settled = true;
    });
    await until(() => batcher.failedCommits >= 3, 'three refused commits');
    expect(batcher.stalled).toBe(true);
    expect(settled).toBe(false);
    // Writes queued meanwhile join the retried batch.
    const late = batcher.run(large('c'));
    makeRoom();
    await Promise.all([done, late]);
    expect(db.prepare(`SELECT substr(v, 1, 1) AS v FROM t WHERE v LIKE '_---%' ORDER BY v`).all()).toEqual([{ v: 'a' }, { v: 'b' }, { v: 'c' }]);
    expect(batcher.stalled).toBe(false);
  });

  it('resolves with the value of the run that committed, so effects outside SQL happen once', async () => {
    fillDatabase();
    const batcher = new WriteBatcher(db, { maxDelayMs: 1, retryBaseDelayMs: 5, retryMaxDelayMs: 5 });
    let runs = 0;
    const result = batcher.run(() => {
      runs++;
      db.prepare('INSERT INTO t (v) VALUES (?)').run(`counted${'-'.repeat(300)}`);
      return runs;
    });
    await until(() => batcher.failedCommits >= 2, 'two refused commits');
    makeRoom();
    expect(await result).toBe(runs);
    expect(runs).toBeGreaterThanOrEqual(3);
  });

  it('logs the failure once, not per retry, and once more when it works again', async () => {
    const { logger, lines } = capturedLogger();
    fillDatabase();
    const batcher = new WriteBatcher(db, { maxDelayMs: 1, retryBaseDelayMs: 1, retryMaxDelayMs: 2, logger, failureLogIntervalMs: 60_000 });
    const pending = batcher.run(large('a'));
    await until(() => batcher.failedCommits >= 50, 'fifty refused commits');
    makeRoom();
    await pending;
    expect(lines.map((l) => [l.level, l.msg.split(';')[0]])).toEqual([
      [50, 'committing outcomes and receipts failed'],
      [40, 'committing outcomes and receipts works again'],
    ]);
  });

  it('still rejects alone a write no retry can cure, and its neighbours commit', async () => {
    const batcher = new WriteBatcher(db, { maxDelayMs: 1 });
    const results = await Promise.allSettled([batcher.run(insert('x')), batcher.run(insert('x'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect(batcher.failedCommits).toBe(0);
  });

  it('rejects writes still queued when closed, with STORE_CLOSED', async () => {
    fillDatabase();
    const batcher = new WriteBatcher(db, { maxDelayMs: 1, retryBaseDelayMs: 5 });
    const pending = batcher.run(large('a'));
    await until(() => batcher.failedCommits >= 1, 'a refused commit');
    batcher.close();
    await expect(pending).rejects.toSatisfy((err: unknown) => isGatewayError(err, 'STORE_CLOSED'));
    await expect(batcher.run(large('b'))).rejects.toSatisfy((err: unknown) => isGatewayError(err, 'STORE_CLOSED'));
  });

  it('hands the items of a group queued together to one apply call, in order, and resolves each with its own result', async () => {
    const batcher = new WriteBatcher(db, { maxDelayMs: 5 });
    const calls: string[][] = [];
    const group: WriteGroup<string, number> = {
      apply: (items) => {
        calls.push([...items]);
        db.prepare(`INSERT INTO t (v) SELECT value FROM json_each(?)`).run(JSON.stringify(items));
        return items.map((v) => v.length);
      },
    };
    const results = await Promise.all([batcher.runInGroup(group, 'a'), batcher.runInGroup(group, 'bb'), batcher.runInGroup(group, 'ccc')]);
    expect(results).toEqual([1, 2, 3]);
    expect(calls).toEqual([['a', 'bb', 'ccc']]);
    expect(count()).toBe(3);
    expect(batcher.commits).toBe(1);
  });

  it('applies group items alone after their group failed for good: only the bad item is rejected', async () => {
    const batcher = new WriteBatcher(db, { maxDelayMs: 5 });
    const group: WriteGroup<string, string> = {
      apply: (items) => {
        const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
        for (const v of items) insert.run(v);
        return [...items];
      },
    };
    const results = await Promise.allSettled([batcher.runInGroup(group, 'x'), batcher.runInGroup(group, 'x'), batcher.runInGroup(group, 'y')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(count()).toBe(2);
  });
});
