/**
 * Statement counters for a gateway the benches start, loaded with `node --import` (so the product
 * is measured as it ships: no counting code in src/). Active only when SMSGATE_BENCH_COUNTS_DIR is
 * set; then, in every thread (worker threads inherit the --import):
 *
 * - better-sqlite3: every run/get/all/iterate of a prepared statement (the transaction wrapper's
 *   BEGIN and COMMIT are prepared statements too) and every exec, by SQL text, with the rows it
 *   wrote (`run().changes`, SQLite's own sqlite3_changes) or returned;
 * - pg: every Client#query, i.e. every round trip (pg sends one query at a time per connection and
 *   waits for its ReadyForQuery), by SQL text and by kind of connection (a pooled one, or a
 *   standalone one such as the wakeup LISTEN and the bind-slot locks), and every connect.
 *
 * The counts go to DIR/<pid>-<threadId>.json every SNAPSHOT_EVERY_MS and at exit (written to a
 * temporary name and renamed, so a reader never sees half a file); the bench reads them at the
 * start and the end of a run and takes the difference (bench/counters/snapshot.ts).
 */
import { renameSync, writeFileSync } from 'node:fs';
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
  const write = (): void => {
    const counts: ThreadCounts = {
      pid: process.pid,
      threadId,
      sqlite: [...sqlite].map(([sql, c]) => ({ sql, ...c })),
      pg: [...pgByText].map(([sql, c]) => ({ sql, runs: c.runs, rows: c.rows })),
      pgByConnection: Object.fromEntries(pgByConnection),
      pgConnects,
    };
    if (counts.sqlite.length === 0 && counts.pg.length === 0 && pgConnects === 0) return;
    try {
      writeFileSync(`${file}.tmp`, JSON.stringify(counts));
      renameSync(`${file}.tmp`, file);
    } catch {
      // The bench removed its directory (the run is over): nothing left to report to.
    }
  };
  setInterval(write, SNAPSHOT_EVERY_MS).unref();
  process.on('exit', write);
}

type Method = (this: unknown, ...args: unknown[]) => unknown;

/** Wraps a prototype's method; `after` sees the receiver and the result. */
function wrap(proto: Record<string, unknown>, name: string, after: (self: unknown, result: unknown) => void): void {
  const original = proto[name] as Method | undefined;
  if (typeof original !== 'function') return;
  proto[name] = function wrapped(this: unknown, ...args: unknown[]): unknown {
    const result = original.apply(this, args);
    after(this, result);
    return result;
  };
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
  let Client: { prototype: Record<string, unknown> };
  try {
    Client = (require('pg') as { Client: typeof Client }).Client;
  } catch {
    return;
  }
  const proto = Client.prototype;
  const query = proto['query'] as Method;
  proto['query'] = function countedQuery(this: unknown, ...args: unknown[]): unknown {
    const first = args[0];
    const text = typeof first === 'string' ? first : typeof (first as { text?: unknown } | null)?.text === 'string' ? (first as { text: string }).text : '(non-text query)';
    // pg-pool gives a checked-out connection its `release`; the others are standalone clients.
    const self = this as { release?: unknown; connectionParameters?: { application_name?: string } };
    const kind = typeof self.release === 'function' ? 'pool' : self.connectionParameters?.application_name || 'standalone';
    count(kind, text);
    return query.apply(this, args);
  };
  wrap(proto, 'connect', () => connected());
}
