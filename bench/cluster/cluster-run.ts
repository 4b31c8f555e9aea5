/**
 * One column of bench:cluster: N `smsgate serve` nodes (test/support/cluster-nodes.ts) on one
 * database, one campaign POSTed to node 0, SMPP to bench:e2e's receipting SMSC and signed webhooks
 * to its receiver, each in a process of its own (bench/e2e/sinks.ts), stages timed where they
 * happen on one monotonic clock and summed up by bench/e2e's figures code (sinkFigures), so every
 * column is measured exactly as bench:e2e measures smsgate.
 */
import { join } from 'node:path';
import { campaignBody, postCampaign, readyTimeOf, webhookNotes } from '../e2e/campaign.js';
import { monoMs } from '../e2e/clock.js';
import { collectSinks, runFigures, startHarnessMeter } from '../e2e/run-figures.js';
import { startSinks, stopSinks, type RunSinks, type SinkProcess } from '../e2e/sinks.js';
import { cpuMsOf, peakRssBytesOf, percentile, syscallsBetween, syscallsOf, type RunFigures, type Syscalls } from '../e2e/stats.js';
import type { SmscSinkConfig } from '../e2e/sink-protocol.js';
import { makeTempDir, removeTempDir } from '../e2e/temp-dirs.js';
import { waitForCount } from '../e2e/wait.js';
import { ClusterNodes, type ClusterDatabase, type ClusterNode } from '../../test/support/cluster-nodes.js';
import type { PostgresServer } from '../../test/support/postgres-server.js';
import { postgresCpuMs } from './postgres-cpu.js';
import { databaseOf, type PgStatements, type StatementStat } from './pg-stat-statements.js';
import { counterNodeArgs, COUNTS_DIR_ENV, countsOf, diffCounts, makeCountsDir, readCounts, type Counts } from '../counters/snapshot.js';

export type Backend = 'sqlite' | 'postgres';

export interface ColumnOptions {
  backend: Backend;
  nodes: number;
  recipients: number;
  msisdnFor: (i: number) => string;
  text: string;
  sink: SmscSinkConfig;
  carrier: { binds: number; window: number; maxPerSecond: number };
  /** The bench's PostgreSQL (a fresh database per column); undefined for SQLite. */
  postgres: PostgresServer | undefined;
  progressEveryMs: number;
  /** PostgreSQL's own statement counts (pg_stat_statements), when the server has them. */
  pgStatements: PgStatements | undefined;
}

/** What bench:cluster adds to bench:e2e's figures: the database server's share and the whole machine's. */
export interface ColumnFigures {
  run: RunFigures;
  backend: Backend;
  nodes: number;
  /** The nodes' CPU (every thread of every serve process) over the run. */
  nodesCpuMs: number;
  /** PostgreSQL's CPU (postmaster and backends) over the run; 0 on SQLite. */
  postgresCpuMs: number;
  /** Each node's CPU over the run, by node index: how evenly the work spread. */
  cpuMsByNode: number[];
  /** Recipient -> webhook 2xx after the POST was sent, per recipient: p50 / p99 / max. */
  toWebhookMs: { p50: number; p99: number; max: number };
  /** The nodes' SQLite statements and PostgreSQL round trips over the run (bench/counters). */
  counts: Counts;
  /** The column database's statements on the PostgreSQL server over the run; undefined on SQLite or without pg_stat_statements. */
  pgStatements: StatementStat[] | undefined;
}

/** How long to wait after the run for the nodes' counters to be written once more (preload.ts writes every 1,000 ms). */
const COUNTS_SETTLE_MS = 1_300;

const SECRET = 'bench-cluster-webhook-secret';
/** A column whose webhooks stop coming for this long has stalled: it fails with the nodes' warnings. */
const STALL_MS = 60_000;

export function columnLabel(backend: Backend, nodes: number): string {
  return backend === 'sqlite' ? 'SQLite x1' : `PostgreSQL x${nodes}`;
}

export async function runColumn(options: ColumnOptions): Promise<ColumnFigures> {
  const label = columnLabel(options.backend, options.nodes);
  const dir = makeTempDir('smsgate-bench-cluster-');
  const countsDir = makeCountsDir(dir);
  const notes: string[] = [];
  let sinks: RunSinks | undefined;
  let cluster: ClusterNodes | undefined;
  try {
    sinks = await startSinks(options.sink, { secret: SECRET });
    const { smsc, receiver } = sinks;
    const database: ClusterDatabase =
      options.backend === 'sqlite'
        ? { kind: 'sqlite', path: join(dir, 'smsgate.sqlite') }
        : { kind: 'postgres', url: await requirePostgres(options).createDatabase() };
    // The nodes count their statements (bench/counters/preload.ts, loaded with --import), into countsDir.
    process.env[COUNTS_DIR_ENV] = countsDir;
    cluster = await ClusterNodes.start({
      nodeArgs: () => counterNodeArgs(),
      dir,
      database,
      nodes: options.nodes,
      carrier: { host: smsc.address.host, port: smsc.address.port, ...options.carrier },
      account: { webhookUrl: receiver.address.url, webhookSecret: SECRET, sender: 'Bench' },
      // bench:e2e's gateway settings, so the SQLite column is bench:e2e's smsgate run.
      extraConfig: { webhooks: { concurrency: 64 } },
    });
    const nodes = cluster.nodes;
    const running = cluster;
    // The cluster's binds are all up (however the nodes share them) before the clock starts.
    await waitForBinds(smsc, options.carrier.binds);

    const body = campaignBody(options);
    const harness = startHarnessMeter(smsc, receiver);
    const pids = nodes.map((node) => node.pid);
    const countsAtStart = countsOf(readCounts(countsDir), pids);
    if (database.kind === 'postgres') await options.pgStatements?.reset();
    const cpuAtStart = nodes.map((node) => cpuMsOf(node.pid));
    const syscallsAtStart = nodes.map((node) => syscallsOf(node.pid));
    // The server idles beside a SQLite column: its CPU is counted for PostgreSQL columns only.
    const measuredPostgres = options.backend === 'postgres' ? options.postgres : undefined;
    const pgAtStart = measuredPostgres === undefined ? 0 : postgresCpuMs(measuredPostgres.pid);
    const startedAtEpochMs = Date.now();
    const startedAtMs = monoMs();
    const { acceptedAtMs } = await postCampaign(running.node(0).baseUrl, running.account.token, body, startedAtMs);

    await waitForCount(stallGuard(() => receiver.progress.webhooksAcknowledged, nodes, () => `submits=${smsc.progress.submitted} receipts=${smsc.progress.receiptsAcknowledged}`), options.recipients, {
      label,
      sinks: [smsc, receiver],
      startedAtMs,
      progressEveryMs: options.progressEveryMs,
      gatewayGone: () => {
        const gone = nodes.find((node) => node.exited);
        return gone === undefined ? undefined : `node ${gone.index} exited; its last log lines:\n${gone.logLines.slice(-10).join('\n')}`;
      },
      line: () => `submits=${smsc.progress.submitted} receipts=${smsc.progress.receiptsAcknowledged} webhooks=${receiver.progress.webhooksAcknowledged}`,
    });
    const finishedAtMs = monoMs();
    const cpuMsByNode = nodes.map((node, i) => cpuMsOf(node.pid) - (cpuAtStart[i] as number));
    const syscalls = nodes.map((node, i) => syscallsBetween(syscallsAtStart[i] as Syscalls, syscallsOf(node.pid))).reduce((sum, one) => ({ reads: sum.reads + one.reads, writes: sum.writes + one.writes }), { reads: 0, writes: 0 });
    const pgCpuMs = measuredPostgres === undefined ? 0 : postgresCpuMs(measuredPostgres.pid) - pgAtStart;
    const harnessFigures = harness.stop();
    await new Promise((resolve) => setTimeout(resolve, COUNTS_SETTLE_MS));
    const counts = diffCounts(countsOf(readCounts(countsDir), pids), countsAtStart);
    const pgStatements = database.kind === 'postgres' ? await options.pgStatements?.read(databaseOf(database.url)) : undefined;
    const peakRssBytes = nodes.reduce((sum, node) => sum + peakRssBytesOf(node.pid), 0);
    const { sink, receiverEvents } = await collectSinks(smsc, receiver, startedAtMs);
    notes.push(...webhookNotes(receiver, receiverEvents));
    const toWebhook = receiverEvents.acknowledgedAtMs.map((t) => t - startedAtMs);

    const exitCodes = await running.stopAll();
    cluster = undefined;
    exitCodes.forEach((code, i) => {
      if (code !== 0) notes.push(`node ${i} exited ${code} on SIGTERM`);
    });
    const readyAtMs = firstReadyTimeOf(nodes, startedAtEpochMs);
    if (readyAtMs === undefined) notes.push('no "campaign ready" log line seen');
    const nodesCpuMs = cpuMsByNode.reduce((a, b) => a + b, 0);
    // No single main thread, /metrics, API probe or profile across processes: those stay undefined.
    const run: RunFigures = runFigures({
      label,
      setup:
        `${options.nodes} smsgate serve node${options.nodes === 1 ? '' : 's'} (own processes) on ${options.backend === 'sqlite' ? 'one SQLite file (synchronous=FULL)' : 'one PostgreSQL 15 (fsync=off, throwaway)'}, ` +
        `SMPP binds ${options.carrier.binds} for the cluster x window ${options.carrier.window}, no rate cap, webhooks.concurrency 64 per node; one POST /v1/campaign to node 0. ` +
        '"gateway CPU" = the nodes + PostgreSQL; "peak RSS" = the nodes\' VmHWM summed',
      messages: options.recipients,
      acceptedAtMs,
      readyAtMs,
      startedAtMs,
      finishedAtMs,
      sink,
      harness: harnessFigures,
      gatewayCpuMs: nodesCpuMs + pgCpuMs,
      // The nodes' own syscalls (PostgreSQL's are not counted).
      syscalls,
      peakRssBytes,
      notes,
    });
    return {
      run,
      backend: options.backend,
      nodes: options.nodes,
      nodesCpuMs,
      postgresCpuMs: pgCpuMs,
      cpuMsByNode,
      toWebhookMs: { p50: percentile(toWebhook, 50), p99: percentile(toWebhook, 99), max: percentile(toWebhook, 100) },
      counts,
      pgStatements,
    };
  } finally {
    delete process.env[COUNTS_DIR_ENV];
    await cluster?.stopAll();
    await stopSinks(sinks);
    removeTempDir(dir);
  }
}

/**
 * Wraps a progress counter: throws once it has not moved for STALL_MS, with every node's last
 * warnings and errors (pino levels 40 and up), so a stalled column says why instead of waiting out
 * bench:e2e's 30-minute limit.
 */
function stallGuard(count: () => number, nodes: readonly ClusterNode[], where: () => string): () => number {
  let last = -1;
  let movedAtMs = monoMs();
  return () => {
    const value = count();
    if (value !== last) {
      last = value;
      movedAtMs = monoMs();
    } else if (monoMs() - movedAtMs > STALL_MS) {
      const warnings = nodes.map((node) => `node ${node.index}:\n${warningsOf(node).slice(-15).join('\n')}`).join('\n');
      throw new Error(`no progress for ${STALL_MS / 1_000} s at ${value} webhooks (${where()}); the nodes' last warnings:\n${warnings}`);
    }
    return value;
  };
}

function warningsOf(node: ClusterNode): string[] {
  return node.logLines.filter((line) => {
    try {
      return ((JSON.parse(line) as { level?: unknown }).level as number) >= 40;
    } catch {
      return false;
    }
  });
}

function requirePostgres(options: ColumnOptions): PostgresServer {
  if (options.postgres === undefined) throw new Error('a PostgreSQL column needs the bench\'s server');
  return options.postgres;
}

/** Polls the SMSC's bound sessions until `binds` are bound (the cluster's binds, however shared). */
async function waitForBinds(smsc: SinkProcess, binds: number): Promise<void> {
  const deadline = monoMs() + 60_000;
  while (smsc.progress.boundSessions < binds) {
    smsc.assertAlive();
    if (monoMs() > deadline) throw new Error(`only ${smsc.progress.boundSessions} of ${binds} binds after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The first "campaign ready" log line of any node (the one that processed it), as ms after the POST was sent. */
function firstReadyTimeOf(nodes: readonly ClusterNode[], startedAtEpochMs: number): number | undefined {
  for (const node of nodes) {
    const readyAtMs = readyTimeOf(node.logLines, startedAtEpochMs);
    if (readyAtMs !== undefined) return readyAtMs;
  }
  return undefined;
}
