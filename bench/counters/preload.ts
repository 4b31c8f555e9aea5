/**
 * Statement counters for a gateway the benches start, loaded with `node --import` (so the product
 * is measured as it ships: no counting code in src/). Active only when SMSGATE_BENCH_COUNTS_DIR is
 * set; then, in every thread (worker threads inherit the --import):
 *
 * - better-sqlite3: every run/get/all/iterate of a prepared statement (the transaction wrapper's
 *   BEGIN and COMMIT are prepared statements too) and every exec, by SQL text, with the rows it
 *   wrote (`run().changes`, SQLite's own sqlite3_changes) or returned;
 * - pg: every Client#query, i.e. every round trip (pg sends one query at a time per connection and
 *   waits for its ReadyForQuery), by SQL text and by connection (the pool it came from, or a
 *   standalone one such as the wakeup LISTEN and the bind-slot locks), and every connect.
 *
 * The counts go to DIR/<pid>-<threadId>.json every SNAPSHOT_EVERY_MS and at exit (written to a
 * temporary name and renamed, so a reader never sees half a file); the bench reads them at the
 * start and the end of a run and takes the difference (bench/counters/snapshot.ts).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { ThreadCounts } from './snapshot.js';

// Once a second: each write serialises every SQL text seen, so more often would cost the gateway
// measurable CPU a message; the bench waits a little longer than this after a run before reading.
const SNAPSHOT_EVERY_MS = 1_000;

interface SqlCount {
  runs: number;
  rows: number;
}

const dir = process.env['SMSGATE_BENCH_COUNTS_DIR'];
if (dir !== undefined && dir !== '') install(dir);

function install(outDir: string): void {
  const require = createRequire(import.meta.url);
  const sqlite = new Map<string, SqlCount>();
  const pgByText = new Map<string, SqlCount>();
  const pgByConnection = new Map<string, number>();
  let pgConnects = 0;

  const countSqlite = (sql: string, rows: number): void => {
    const entry = sqlite.get(sql);
    if (entry === undefined) sqlite.set(sql, { runs: 1, rows });
    else {
      entry.runs += 1;
      entry.rows += rows;
    }
  };

  patchSqlite(require, countSqlite);
  patchPg(require, (kind, text) => {
    pgByConnection.set(kind, (pgByConnection.get(kind) ?? 0) + 1);
    const entry = pgByText.get(text);
    if (entry === undefined) pgByText.set(text, { runs: 1, rows: 0 });
    else entry.runs += 1;
  }, () => {
    pgConnects += 1;
  });

  const file = join(outDir, `${process.pid}-${threadId}.json`);
  const snapshot = (): string | undefined => {
    const counts: ThreadCounts = {
      pid: process.pid,
      threadId,
      sqlite: [...sqlite].map(([sql, c]) => ({ sql, ...c })),
      pg: [...pgByText].map(([sql, c]) => ({ sql, runs: c.runs, rows: c.rows })),
      pgByConnection: Object.fromEntries(pgByConnection),
      pgConnects,
    };
    return counts.sqlite.length === 0 && counts.pg.length === 0 && pgConnects === 0 ? undefined : JSON.stringify(counts);
  };
  // While the gateway runs the file is written off its event loop (libuv's pool), one write at a
  // time; at exit synchronously, as the last thing the thread does.
  let writing = false;
  const writeSoon = (): void => {
    const text = snapshot();
    if (text === undefined || writing) return;
    writing = true;
    writeFile(`${file}.tmp`, text)
      .then(() => rename(`${file}.tmp`, file))
      .catch(() => undefined) // the bench removed its directory: the run is over, nothing to report to
      .finally(() => {
        writing = false;
      });
  };
  setInterval(writeSoon, SNAPSHOT_EVERY_MS).unref();
  process.on('exit', () => {
    const text = snapshot();
    if (text === undefined) return;
    try {
      writeFileSync(`${file}.exit.tmp`, text);
      renameSync(`${file}.exit.tmp`, file);
    } catch {
      // As above: nothing left to report to.
    }
  });
}

type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Wraps a prototype's method; `after` sees the receiver and the result. The wrapper keeps the
 * method's name, so a CPU profile shows `run` or `all` where the statement ran (bench/e2e's profile
 * summary puts the wrapper's time in its caller's category, as it did the bare native call).
 */
function wrap(proto: Record<string, unknown>, name: string, after: (self: unknown, result: unknown) => void): void {
  const original = proto[name] as Method | undefined;
  if (typeof original !== 'function') return;
  const countedCall = {
    [name](this: unknown, ...args: unknown[]): unknown {
      const result = original.apply(this, args);
      after(this, result);
      return result;
    },
  };
  proto[name] = countedCall[name];
}

function patchSqlite(require: NodeRequire, count: (sql: string, rows: number) => void): void {
  let Database: { new (path: string): { prepare(sql: string): object; close(): void }; prototype: Record<string, unknown> };
  try {
    Database = require('better-sqlite3') as typeof Database;
  } catch {
    return;
  }
  // Every statement is an instance of the one native Statement class: its prototype, from a probe.
  const probe = new Database(':memory:');
  const statementProto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, unknown>;
  probe.close();
  const sourceOf = (self: unknown): string => (self as { source: string }).source;
  wrap(statementProto, 'run', (self, result) => count(sourceOf(self), (result as { changes: number }).changes));
  wrap(statementProto, 'get', (self, result) => count(sourceOf(self), result === undefined ? 0 : 1));
  wrap(statementProto, 'all', (self, result) => count(sourceOf(self), (result as unknown[]).length));
  wrap(statementProto, 'iterate', (self) => count(sourceOf(self), 0));
  const dbProto = Database.prototype;
  const exec = dbProto['exec'] as Method;
  dbProto['exec'] = function countedExec(this: unknown, sql: unknown): unknown {
    const result = exec.call(this, sql);
    count(String(sql), 0);
    return result;
  };
}

function patchPg(require: NodeRequire, count: (connection: string, text: string) => void, connected: () => void): void {
  let pgModule: { Client: { prototype: Record<string, unknown> }; Pool: { prototype: Record<string, unknown> } };
  try {
    pgModule = require('pg') as typeof pgModule;
  } catch {
    return;
  }
  // Which pool a checked-out connection came from: pools are named in the order they first hand
  // one out, with their size (a node has its store's pool and the cluster heartbeat's).
  const poolNames = new WeakMap<object, string>();
  const poolOfClient = new WeakMap<object, string>();
  let pools = 0;
  const poolProto = pgModule.Pool.prototype;
  const poolConnect = poolProto['connect'] as Method;
  poolProto['connect'] = function countedConnect(this: object, callback?: unknown): unknown {
    let name = poolNames.get(this);
    if (name === undefined) {
      pools += 1;
      name = `pool ${pools} (max ${(this as { options?: { max?: number } }).options?.max ?? '?'})`;
      poolNames.set(this, name);
    }
    const poolName = name;
    const tag = (client: unknown): void => {
      if (typeof client === 'object' && client !== null) poolOfClient.set(client, poolName);
    };
    if (typeof callback === 'function') {
      return poolConnect.call(this, (err: unknown, client: unknown, done: unknown) => {
        tag(client);
        (callback as (...a: unknown[]) => void)(err, client, done);
      });
    }
    return (poolConnect.call(this) as Promise<unknown>).then((client) => {
      tag(client);
      return client;
    });
  };

  const proto = pgModule.Client.prototype;
  const query = proto['query'] as Method;
  proto['query'] = function countedQuery(this: object, ...args: unknown[]): unknown {
    const first = args[0];
    const text = typeof first === 'string' ? first : typeof (first as { text?: unknown } | null)?.text === 'string' ? (first as { text: string }).text : '(non-text query)';
    // A pooled connection is named by its pool; a standalone client (the wakeup LISTEN, the
    // bind-slot locks) by its application_name.
    const self = this as { connectionParameters?: { application_name?: string } };
    const kind = poolOfClient.get(this) ?? (self.connectionParameters?.application_name || 'standalone');
    count(kind, text);
    return query.apply(this, args);
  };
  wrap(proto, 'connect', () => connected());
}
