/**
 * The bench's side of the statement counters (bench/counters/preload.ts writes them from inside
 * the gateway): where they go, how the per-thread files add up to a process's counts, the
 * difference between two readings (the run's own statements, not the startup's), and what each SQL
 * text is (kind of statement, table) so the printout can group by table.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One SQL text's executions in one thread: runs, and rows written (writes) or returned (reads). */
export interface SqlRuns {
  sql: string;
  runs: number;
  rows: number;
}

/** What preload.ts writes for one thread. */
export interface ThreadCounts {
  pid: number;
  threadId: number;
  sqlite: SqlRuns[];
  /** Client#query calls (round trips) by SQL text; rows unknown (0). */
  pg: SqlRuns[];
  /** Round trips by kind of connection: "pool" or a standalone client's application_name. */
  pgByConnection: Record<string, number>;
  pgConnects: number;
}

/** One process's counts (its threads added up), or a difference of two readings. */
export interface Counts {
  sqlite: Map<string, SqlRuns>;
  pg: Map<string, SqlRuns>;
  pgByConnection: Map<string, number>;
  pgConnects: number;
}

/** The --import argument that loads the counters into a gateway (the compiled preload next to this file). */
export function counterNodeArgs(): string[] {
  return ['--import', join(dirname(fileURLToPath(import.meta.url)), 'preload.js')];
}

/** Env var the preload reads: where to write. */
export const COUNTS_DIR_ENV = 'SMSGATE_BENCH_COUNTS_DIR';

/** A fresh directory for one run's counter files (removed with the run's temp dir or left in /tmp). */
export function makeCountsDir(parent?: string): string {
  return mkdtempSync(join(parent ?? tmpdir(), 'smsgate-bench-counts-'));
}

export function emptyCounts(): Counts {
  return { sqlite: new Map(), pg: new Map(), pgByConnection: new Map(), pgConnects: 0 };
}

function addRuns(into: Map<string, SqlRuns>, list: Iterable<SqlRuns>, sign: 1 | -1): void {
  for (const r of list) {
    const entry = into.get(r.sql);
    if (entry === undefined) into.set(r.sql, { sql: r.sql, runs: sign * r.runs, rows: sign * r.rows });
    else {
      entry.runs += sign * r.runs;
      entry.rows += sign * r.rows;
    }
  }
}

function addInto(into: Counts, from: Counts | ThreadCounts, sign: 1 | -1): void {
  addRuns(into.sqlite, from.sqlite instanceof Map ? from.sqlite.values() : from.sqlite, sign);
  addRuns(into.pg, from.pg instanceof Map ? from.pg.values() : from.pg, sign);
  const byConnection = from.pgByConnection instanceof Map ? from.pgByConnection : new Map(Object.entries(from.pgByConnection));
  for (const [kind, n] of byConnection) into.pgByConnection.set(kind, (into.pgByConnection.get(kind) ?? 0) + sign * n);
  into.pgConnects += sign * from.pgConnects;
}

/** Every process's counts so far in `dir`, by pid (threads added up). */
export function readCounts(dir: string): Map<number, Counts> {
  const byPid = new Map<number, Counts>();
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return byPid;
  }
  for (const file of files) {
    let thread: ThreadCounts;
    try {
      thread = JSON.parse(readFileSync(join(dir, file), 'utf8')) as ThreadCounts;
    } catch {
      continue;
    }
    let counts = byPid.get(thread.pid);
    if (counts === undefined) byPid.set(thread.pid, (counts = emptyCounts()));
    addInto(counts, thread, 1);
  }
  return byPid;
}

/** The counts of the given processes added up. */
export function countsOf(readings: Map<number, Counts>, pids: readonly number[]): Counts {
  const sum = emptyCounts();
  for (const pid of pids) {
    const counts = readings.get(pid);
    if (counts !== undefined) addInto(sum, counts, 1);
  }
  return sum;
}

/** end - start: what ran between the two readings. */
export function diffCounts(end: Counts, start: Counts): Counts {
  const diff = emptyCounts();
  addInto(diff, end, 1);
  addInto(diff, start, -1);
  return diff;
}

export type SqlKind = 'insert' | 'update' | 'delete' | 'select' | 'transaction' | 'other';

export interface SqlShape {
  kind: SqlKind;
  /** The table written (writes) or first read (reads); "-" when none. */
  table: string;
  /** The text with whitespace collapsed and parameter lists of any length folded to one, so batches of different sizes count as one statement. */
  normal: string;
}

const WRITES: readonly [Exclude<SqlKind, 'select' | 'transaction' | 'other'>, RegExp][] = [
  ['insert', /\b(?:INSERT(?:\s+OR\s+\w+)?|REPLACE)\s+INTO\s+["`]?(\w+)/i],
  ['update', /\bUPDATE\s+(?:OR\s+\w+\s+)?["`]?(\w+)["`]?(?:\s+(?:AS\s+)?\w+)?\s+SET\b/i],
  ['delete', /\bDELETE\s+FROM\s+["`]?(\w+)/i],
];

const shapes = new Map<string, SqlShape>();

/** What one SQL text is: the earliest write it does (a WITH ... UPDATE is an update), else a read of its first FROM. */
export function classifySql(sql: string): SqlShape {
  const cached = shapes.get(sql);
  if (cached !== undefined) return cached;
  const normal = normalizeSql(sql);
  let best: { kind: SqlKind; table: string; at: number } | undefined;
  for (const [kind, pattern] of WRITES) {
    const match = pattern.exec(normal);
    if (match !== null && match[1] !== undefined && match[1].toUpperCase() !== 'SET' && (best === undefined || match.index < best.at)) {
      best = { kind, table: match[1], at: match.index };
    }
  }
  let shape: SqlShape;
  if (best !== undefined) shape = { kind: best.kind, table: best.table, normal };
  else {
    const verb = (/^\s*(\w+)/.exec(normal)?.[1] ?? '').toUpperCase();
    if (verb === 'SELECT' || verb === 'WITH') shape = { kind: 'select', table: /\bFROM\s+["`]?(\w+)/i.exec(normal)?.[1] ?? '-', normal };
    else if (['BEGIN', 'COMMIT', 'ROLLBACK', 'SAVEPOINT', 'RELEASE', 'END'].includes(verb)) shape = { kind: 'transaction', table: verb, normal };
    else shape = { kind: 'other', table: verb || '-', normal };
  }
  shapes.set(sql, shape);
  return shape;
}

function normalizeSql(sql: string): string {
  return sql
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\?(?:\s*,\s*\?)+/g, '?, ...')
    .replace(/\$\d+(?:\s*,\s*\$\d+)+/g, '$n, ...')
    .replace(/(\([^()]*\))(?:\s*,\s*\([^()]*\))+/g, '$1, ...');
}
