/**
 * Printouts of the statement counters, per message of the run: SQLite statements and rows written
 * by table (better-sqlite3 in the gateway), PostgreSQL round trips by connection kind (pg in the
 * nodes), and the statements that ran most often.
 */
import { table } from '../e2e/report.js';
import { classifySql, type Counts, type SqlKind } from './snapshot.js';

const TOP = 10;
const SQL_WIDTH = 120;

const perMsg = (n: number, messages: number): string => {
  const v = n / messages;
  return v === 0 ? '0' : v >= 10 ? v.toFixed(1) : v >= 0.01 ? v.toFixed(2) : v.toFixed(4);
};

const clip = (sql: string): string => (sql.length > SQL_WIDTH ? `${sql.slice(0, SQL_WIDTH - 3)}...` : sql);

interface Shaped {
  kind: SqlKind;
  table: string;
  normal: string;
  runs: number;
  rows: number;
}

/** Counts grouped by normalised text (batches of any size are one statement). */
function shaped(runs: Iterable<{ sql: string; runs: number; rows: number }>): Shaped[] {
  const byNormal = new Map<string, Shaped>();
  for (const r of runs) {
    if (r.runs === 0) continue;
    const shape = classifySql(r.sql);
    const entry = byNormal.get(shape.normal);
    if (entry === undefined) byNormal.set(shape.normal, { ...shape, runs: r.runs, rows: r.rows });
    else {
      entry.runs += r.runs;
      entry.rows += r.rows;
    }
  }
  return [...byNormal.values()];
}

export interface SqliteTotals {
  statements: number;
  transactions: number;
  rowsWritten: number;
}

export function sqliteTotals(counts: Counts): SqliteTotals {
  const all = shaped(counts.sqlite.values());
  return {
    statements: all.reduce((s, r) => s + r.runs, 0),
    transactions: all.filter((r) => r.kind === 'transaction' && r.table === 'COMMIT').reduce((s, r) => s + r.runs, 0),
    rowsWritten: all.filter((r) => isWrite(r.kind)).reduce((s, r) => s + r.rows, 0),
  };
}

const isWrite = (kind: SqlKind): boolean => kind === 'insert' || kind === 'update' || kind === 'delete';

/** SQLite: statements and rows a message by table, the totals, and the most frequent statements. */
export function formatSqliteCounts(label: string, counts: Counts, messages: number): string {
  const all = shaped(counts.sqlite.values());
  if (all.length === 0) return `${label}: no SQLite statement counted (was the gateway started with the counters' --import?)`;
  const byTable = new Map<string, { reads: number; inserts: number; updates: number; deletes: number; written: number; read: number }>();
  for (const r of all) {
    if (r.kind === 'transaction' || r.kind === 'other') continue;
    let t = byTable.get(r.table);
    if (t === undefined) byTable.set(r.table, (t = { reads: 0, inserts: 0, updates: 0, deletes: 0, written: 0, read: 0 }));
    if (r.kind === 'select') {
      t.reads += r.runs;
      t.read += r.rows;
    } else {
      if (r.kind === 'insert') t.inserts += r.runs;
      else if (r.kind === 'update') t.updates += r.runs;
      else t.deletes += r.runs;
      t.written += r.rows;
    }
  }
  const tables = [...byTable].sort((a, b) => b[1].written - a[1].written || b[1].reads - a[1].reads);
  const totals = sqliteTotals(counts);
  const other = all.filter((r) => r.kind === 'transaction' || r.kind === 'other').sort((a, b) => b.runs - a.runs);
  const lines = [
    `${label}: SQLite statements a message (better-sqlite3 runs in the gateway, every thread, POST -> last webhook; rows written = sqlite3_changes of each run):`,
    table(
      ['table', 'rows written/msg', 'INSERT/msg', 'UPDATE/msg', 'DELETE/msg', 'SELECT/msg', 'rows read/msg'],
      tables.map(([name, t]) => [name, perMsg(t.written, messages), perMsg(t.inserts, messages), perMsg(t.updates, messages), perMsg(t.deletes, messages), perMsg(t.reads, messages), perMsg(t.read, messages)]),
    ),
    `all statements ${perMsg(totals.statements, messages)}/msg, rows written ${perMsg(totals.rowsWritten, messages)}/msg, transactions (COMMIT) ${perMsg(totals.transactions, messages)}/msg; ` +
      `others: ${other.map((r) => `${r.normal.length > 40 ? `${r.normal.slice(0, 37)}...` : r.normal} ${perMsg(r.runs, messages)}`).join(', ') || 'none'}`,
    `top ${TOP} statements by runs a message:`,
    topTable(all, messages, 'rows/msg'),
  ];
  return lines.join('\n');
}

export interface PgClientTotals {
  roundTrips: number;
  connects: number;
}

export function pgClientTotals(counts: Counts): PgClientTotals {
  let roundTrips = 0;
  for (const n of counts.pgByConnection.values()) roundTrips += n;
  return { roundTrips, connects: counts.pgConnects };
}

/** PostgreSQL from the nodes' side: round trips (Client#query calls) a message, by connection kind and by statement. */
export function formatPgClientCounts(label: string, counts: Counts, messages: number): string {
  const totals = pgClientTotals(counts);
  if (totals.roundTrips === 0) return `${label}: no PostgreSQL round trip counted (was the node started with the counters' --import?)`;
  const byKind = [...counts.pgByConnection].filter(([, n]) => n !== 0).sort((a, b) => b[1] - a[1]).map(([kind, n]) => `${kind} ${perMsg(n, messages)}`);
  return [
    `${label}: PostgreSQL round trips a message (pg Client#query calls in the node processes, POST -> last webhook): ${perMsg(totals.roundTrips, messages)} ` +
      `(${byKind.join(', ')}); new connections during the run: ${totals.connects}`,
    `top ${TOP} statements by round trips a message (client side):`,
    topTable(shaped(counts.pg.values()), messages, undefined),
  ].join('\n');
}

function topTable(all: Shaped[], messages: number, rowsHeader: string | undefined): string {
  const top = [...all].sort((a, b) => b.runs - a.runs).slice(0, TOP);
  const header = ['runs/msg', ...(rowsHeader === undefined ? [] : [rowsHeader]), 'kind', 'table', 'statement'];
  return statementTable(header, top.map((r) => [perMsg(r.runs, messages), ...(rowsHeader === undefined ? [] : [perMsg(r.rows, messages)]), r.kind, r.table, clip(r.normal)]));
}

/** A table whose figures are right-aligned and whose last column (a statement's text) is left-aligned. */
export function statementTable(header: string[], rows: string[][]): string {
  const last = header.length - 1;
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: string[]): string => cells.map((cell, c) => (c === last ? cell : c >= last - 2 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join(' | ');
  return ['  ' + line(header), '  ' + widths.map((w, c) => '-'.repeat(c === last ? Math.min(w, 9) : w)).join('-|-'), ...rows.map((r) => '  ' + line(r))].join('\n');
}
