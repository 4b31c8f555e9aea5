/**
 * bench:cluster's printout beyond bench:e2e's stage table (bench/e2e/report.ts formatRuns): one
 * column per setup with rates, latency percentiles, CPU per message split between the nodes and
 * PostgreSQL, how busy the machine's cores were, and what bounds each column on them.
 */
import { cpus } from 'node:os';
import { table } from '../e2e/report.js';
import { endToEndPerSecond, type Stage } from '../e2e/stats.js';
import { columnLabel, type ColumnFigures } from './cluster-run.js';
import { formatPgClientCounts, formatSqliteCounts, pgClientTotals, sqliteTotals } from '../counters/format.js';
import { formatPgStatements, statementsTotal } from './pg-stat-statements.js';

const CORES = cpus().length;

const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const seconds = (ms: number): string => (Number.isFinite(ms) ? `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)} s` : '-');
const pct = (part: number, whole: number): string => (whole > 0 ? `${((100 * part) / whole).toFixed(0)}%` : '-');

function stageRate(stage: Stage): number {
  const spanMs = stage.lastAtMs - stage.firstAtMs;
  return spanMs > 0 ? stage.count / (spanMs / 1_000) : Number.NaN;
}

const perMessageUs = (cpuMs: number, messages: number): number => (cpuMs * 1_000) / messages;

/** Every process of the run (nodes, PostgreSQL, SMSC, receiver, the bench) in cores over the wall time. */
function coresBusy(column: ColumnFigures): number {
  const { run } = column;
  const harness = run.harnessCpuMs.smsc + run.harnessCpuMs.receiver + run.harnessCpuMs.driver;
  return (column.nodesCpuMs + column.postgresCpuMs + harness) / run.endToEndMs;
}

export function formatColumns(columns: readonly ColumnFigures[]): string {
  const baseline = columns.find((c) => c.backend === 'sqlite');
  const rows: [string, (c: ColumnFigures) => string][] = [
    ['END TO END messages/s (POST -> last webhook 2xx)', (c) => int(endToEndPerSecond(c.run))],
    ['  vs SQLite x1', (c) => (baseline === undefined ? '-' : `${(endToEndPerSecond(c.run) / endToEndPerSecond(baseline.run)).toFixed(2)}x`)],
    ['submitted / receipts stored / webhooks 2xx, msg/s first to last', (c) => [c.run.stages.submitted, c.run.stages.receipts, c.run.stages.webhooks].map((s) => int(stageRate(s))).join(' / ')],
    ['POST -> webhook 2xx per recipient p50 / p99 / max', (c) => `${seconds(c.toWebhookMs.p50)} / ${seconds(c.toWebhookMs.p99)} / ${seconds(c.toWebhookMs.max)}`],
    ['receipt stored -> webhook 2xx p50 / p99', (c) => `${seconds(c.run.lag.p50Ms)} / ${seconds(c.run.lag.p99Ms)}`],
    ['CPU per message: nodes + PostgreSQL = total', (c) => `${int(perMessageUs(c.nodesCpuMs, c.run.messages))} + ${int(perMessageUs(c.postgresCpuMs, c.run.messages))} = ${int(perMessageUs(c.nodesCpuMs + c.postgresCpuMs, c.run.messages))} µs`],
    ['statements a message: SQLite runs / PostgreSQL server (pg_stat_statements)', (c) => statementsCell(c)],
    ['PostgreSQL round trips a message (the nodes\' pg queries)', (c) => (c.backend === 'sqlite' ? '-' : perMessage(pgClientTotals(c.counts).roundTrips, c.run.messages))],
    ['CPU by node, % of one core over the run', (c) => c.cpuMsByNode.map((ms) => pct(ms, c.run.endToEndMs)).join(' / ')],
    ['PostgreSQL CPU, % of one core', (c) => (c.backend === 'sqlite' ? '-' : pct(c.postgresCpuMs, c.run.endToEndMs))],
    [`cores busy (every process of the run, of ${CORES})`, (c) => coresBusy(c).toFixed(2)],
    ['load average (1 min) at start / end', (c) => `${c.run.loadAverage.atStart.toFixed(1)} / ${c.run.loadAverage.atEnd.toFixed(1)}`],
  ];
  return table(['', ...columns.map((c) => c.run.label)], rows.map(([name, cell]) => [name, ...columns.map(cell)]));
}

const perMessage = (n: number, messages: number): string => (n / messages).toFixed(2);

function statementsCell(c: ColumnFigures): string {
  if (c.backend === 'sqlite') return perMessage(sqliteTotals(c.counts).statements, c.run.messages);
  return c.pgStatements === undefined ? '-' : perMessage(statementsTotal(c.pgStatements), c.run.messages);
}

/** One column's statement counts: SQLite's by table, or PostgreSQL's round trips and the server's statements. */
export function formatColumnCounts(column: ColumnFigures): string {
  const { run } = column;
  const nodeCpu = `node CPU ${int(perMessageUs(column.nodesCpuMs, run.messages))} µs a message`;
  if (column.backend === 'sqlite') return formatSqliteCounts(`${run.label} (${nodeCpu})`, column.counts, run.messages);
  const label = `${run.label} (${nodeCpu}, PostgreSQL server CPU ${int(perMessageUs(column.postgresCpuMs, run.messages))} µs a message)`;
  const parts = [formatPgClientCounts(label, column.counts, run.messages)];
  if (column.pgStatements !== undefined) parts.push(formatPgStatements(label, column.pgStatements, run.messages));
  return parts.join('\n\n');
}

/** The targets of the engine work: PostgreSQL x1 against SQLite x1, in the same run. */
const TARGET_RATE_RATIO = 0.8;
const TARGET_PG_SERVER_US = 150;
const TARGET_NODE_CPU_RATIO = 1.2;

/**
 * PostgreSQL x1 against SQLite x1 in this run, with the targets beside: end to end at least 0.8x
 * SQLite's, the PostgreSQL server at most 150 µs of CPU a message, the node at most 1.2x the SQLite
 * gateway's CPU a message. Undefined unless both columns ran.
 */
export function formatPairTargets(columns: readonly ColumnFigures[]): string | undefined {
  const sqlite = columns.find((c) => c.backend === 'sqlite');
  const pg1 = columns.find((c) => c.backend === 'postgres' && c.nodes === 1);
  if (sqlite === undefined || pg1 === undefined) return undefined;
  const rate = endToEndPerSecond(pg1.run) / endToEndPerSecond(sqlite.run);
  const serverUs = perMessageUs(pg1.postgresCpuMs, pg1.run.messages);
  const nodeUs = perMessageUs(pg1.nodesCpuMs, pg1.run.messages);
  const sqliteUs = perMessageUs(sqlite.nodesCpuMs, sqlite.run.messages);
  const nodeRatio = nodeUs / sqliteUs;
  const mark = (ok: boolean): string => (ok ? 'met' : 'NOT MET');
  const pgLabel = columnLabel('postgres', 1);
  return [
    `Targets, ${pgLabel} against SQLite x1 in this run:`,
    table(
      ['', 'this run', 'target', ''],
      [
        [`${pgLabel} end to end vs SQLite x1`, `${rate.toFixed(2)}x (${int(endToEndPerSecond(pg1.run))} / ${int(endToEndPerSecond(sqlite.run))} msg/s)`, `>= ${TARGET_RATE_RATIO}x`, mark(rate >= TARGET_RATE_RATIO)],
        [`PostgreSQL server CPU a message (${pgLabel})`, `${int(serverUs)} µs`, `<= ${TARGET_PG_SERVER_US} µs`, mark(serverUs <= TARGET_PG_SERVER_US)],
        [`node CPU a message, ${pgLabel} vs SQLite x1 gateway`, `${nodeRatio.toFixed(2)}x (${int(nodeUs)} / ${int(sqliteUs)} µs)`, `<= ${TARGET_NODE_CPU_RATIO}x`, mark(nodeRatio <= TARGET_NODE_CPU_RATIO)],
      ],
    ),
  ].join('\n');
}

/** What bounds each column on this machine, from its figures. */
export function boundNotes(columns: readonly ColumnFigures[]): string {
  const lines = [`What bounds them on ${CORES} cores:`];
  const baseline = columns.find((c) => c.backend === 'sqlite');
  for (const column of columns) {
    const busy = coresBusy(column);
    const total = perMessageUs(column.nodesCpuMs + column.postgresCpuMs, column.run.messages);
    const parts = [`- ${column.run.label}: ${busy.toFixed(2)} of ${CORES} cores busy`];
    const loadAtEnd = column.run.loadAverage.atEnd;
    if (busy >= 0.85 * CORES) parts.push('the machine is full, so CPU per message sets the rate');
    else if (Math.max(column.run.loadAverage.atStart, loadAtEnd) >= CORES) {
      parts.push(`the machine is shared (load average ${column.run.loadAverage.atStart.toFixed(1)}-${loadAtEnd.toFixed(1)} on ${CORES} cores): the run got what the others left, so its rates are lower bounds and CPU per message is the steadier figure`);
    }
    if (busy < 0.85 * CORES && Math.max(...column.cpuMsByNode) / column.run.endToEndMs >= 0.85) {
      parts.push(`the busiest node's process (event loop and webhook thread) used ${pct(Math.max(...column.cpuMsByNode), column.run.endToEndMs)} of a core: its event loop is the limit`);
    } else if (busy < 0.85 * CORES && Math.max(column.run.loadAverage.atStart, loadAtEnd) < CORES) {
      parts.push('the cores have room: waiting (database round trips, the stages handing over) bounds it');
    }
    const stages: [string, Stage][] = [['submits', column.run.stages.submitted], ['receipts stored', column.run.stages.receipts], ['webhooks 2xx', column.run.stages.webhooks]];
    const [slowestName, slowest] = stages.reduce((a, b) => (stageRate(b[1]) < stageRate(a[1]) ? b : a));
    parts.push(`its slowest stage is ${slowestName} at ${int(stageRate(slowest))} msg/s`);
    if (column.backend === 'postgres') {
      parts.push(`PostgreSQL takes ${pct(column.postgresCpuMs, column.nodesCpuMs + column.postgresCpuMs)} of the gateway's CPU`);
    }
    if (baseline !== undefined && column !== baseline) {
      const base = perMessageUs(baseline.nodesCpuMs, baseline.run.messages);
      parts.push(`${int(total)} µs a message against SQLite's ${int(base)} (${(total / base).toFixed(1)}x)`);
    }
    lines.push(parts.join('; ') + '.');
  }
  const pg = columns.filter((c) => c.backend === 'postgres');
  if (pg.length > 0) {
    const nodeUs = Math.min(...pg.map((c) => perMessageUs(c.nodesCpuMs, c.run.messages)));
    const dbUs = Math.min(...pg.map((c) => perMessageUs(c.postgresCpuMs, c.run.messages)));
    lines.push(
      `- More nodes on the same ${CORES} cores add no cores: they split the same work and add their own (heartbeats, claims, polling, connections), so the ` +
        `rate stays flat or falls here. On machines of their own the nodes' part scales out: about ${int(1e6 / nodeUs)} msg/s per node core at ${int(nodeUs)} µs a message, ` +
        `until PostgreSQL (${int(dbUs)} µs a message, about ${int(1e6 / dbUs)} msg/s per database core) is the limit.`,
    );
  }
  return lines.join('\n');
}

export function markdownRow(column: ColumnFigures): string {
  const { run } = column;
  return `| ${run.label} | ${int(endToEndPerSecond(run))} | ${int(stageRate(run.stages.submitted))} | ${int(stageRate(run.stages.webhooks))} | ` +
    `${seconds(column.toWebhookMs.p50)} / ${seconds(column.toWebhookMs.p99)} | ${seconds(run.lag.p99Ms)} | ` +
    `${int(perMessageUs(column.nodesCpuMs, run.messages))} + ${int(perMessageUs(column.postgresCpuMs, run.messages))} | ${coresBusy(column).toFixed(2)} of ${CORES} |`;
}
