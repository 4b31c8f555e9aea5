/**
 * `npm run bench:cluster [-- OPTIONS]`: end-to-end rates (accepted -> submitted ->
 * receipts -> webhooks 2xx) of one campaign through 1, 2 and 3 `smsgate serve` nodes on one
 * PostgreSQL, against 1 node on SQLite (the embedded default), with the same SMSC and webhook
 * receiver (bench:e2e's sink processes) on the same machine; prints rates, latency percentiles, CPU
 * per message (the nodes' and PostgreSQL's) and what bounds them on this machine's cores. Asserts
 * nothing.
 *
 * Every child (nodes, PostgreSQL, sinks) is a peer process: stopped at the end of its column,
 * SIGKILLed when the bench exits or fails, told to stop by the kernel if the bench is killed.
 */
import { machineLine, positiveInt, runBenchMain, UsageError } from '../e2e/bench-main.js';
import { CAMPAIGN_TEXT, msisdnFor } from '../e2e/campaign.js';
import { formatRuns } from '../e2e/report.js';
import type { SmscSinkConfig } from '../e2e/sink-protocol.js';
import { startPostgres, type PostgresServer } from '../../test/support/postgres-server.js';
import { runColumn, type Backend, type ColumnFigures } from './cluster-run.js';
import { boundNotes, formatColumnCounts, formatColumns, formatPairTargets, markdownRow } from './report.js';
import { enablePgStatStatements, type PgStatements } from './pg-stat-statements.js';

const USAGE = 'usage: run.js [--recipients N] [--columns sqlite,pg1,pg2,pg3 | --pair] [--binds N] [--window N] [--progress-ms N]';

interface Column {
  backend: Backend;
  nodes: number;
}

interface BenchArgs {
  recipients: number;
  columns: Column[];
  binds: number;
  window: number;
  progressEveryMs: number;
}

const COLUMN_NAMES: Readonly<Record<string, Column>> = {
  sqlite: { backend: 'sqlite', nodes: 1 },
  pg1: { backend: 'postgres', nodes: 1 },
  pg2: { backend: 'postgres', nodes: 2 },
  pg3: { backend: 'postgres', nodes: 3 },
};

function parseBenchArgs(argv: readonly string[]): BenchArgs {
  // 6 binds: 6, 3 and 2 a node for 1, 2 and 3 nodes, so every node of every column binds. Window
  // 10 (60 units in flight): at main 94c763a a window of 50 got a PostgreSQL node fenced out under
  // load (its heartbeat waited behind hundreds of queued units in the node's 10-connection pool,
  // past the 5 s lease); since receipts are group-applied (3169772) --window 50 runs too.
  const args: BenchArgs = { recipients: 10_000, columns: Object.values(COLUMN_NAMES), binds: 6, window: 10, progressEveryMs: 5_000 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--recipients') args.recipients = positiveInt(arg, argv[++i]);
    else if (arg === '--binds') args.binds = positiveInt(arg, argv[++i]);
    else if (arg === '--window') args.window = positiveInt(arg, argv[++i]);
    else if (arg === '--progress-ms') args.progressEveryMs = positiveInt(arg, argv[++i]);
    // PostgreSQL x1 beside SQLite x1 in one run: the pair the targets compare.
    else if (arg === '--pair') args.columns = [COLUMN_NAMES['sqlite'] as Column, COLUMN_NAMES['pg1'] as Column];
    else if (arg === '--columns') {
      const names = (argv[++i] ?? '').split(',').filter((n) => n !== '');
      const unknown = names.filter((n) => COLUMN_NAMES[n] === undefined);
      if (names.length === 0 || unknown.length > 0) throw new UsageError(`--columns takes a comma-separated list of ${Object.keys(COLUMN_NAMES).join(', ')}; got ${unknown.join(', ') || 'nothing'}`);
      args.columns = names.map((n) => COLUMN_NAMES[n] as Column);
    } else throw new UsageError(`unknown option ${arg}`);
  }
  return args;
}

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  // bench:e2e's sink: receipts 100 ms after each submit, 256 in flight, numbers ending in 9 UNDELIV.
  const sink: SmscSinkConfig = { receiptDelayMs: 100, receiptWindow: 256, undeliveredSuffix: '9' };
  const carrier = { binds: args.binds, window: args.window, maxPerSecond: 100_000 };
  console.log(`cluster bench: ${args.recipients.toLocaleString('en-US')} recipients a column, one GSM-7 part each, receipts on, signed webhooks on`);
  console.log(machineLine());
  console.log(
    `sink: bench:e2e's receipting SMSC and webhook receiver, each in its own process, a fresh pair per column; the SMSC sends every receipt on its first ` +
      `bound transceiver, so with N nodes one node takes every receipt and matches it against parts the others submitted`,
  );
  let postgres: PostgresServer | undefined;
  let pgStatements: PgStatements | undefined;
  const columns: ColumnFigures[] = [];
  const failures: string[] = [];
  try {
    if (args.columns.some((c) => c.backend === 'postgres')) {
      postgres = await startPostgres();
      const enabled = await enablePgStatStatements(postgres);
      if (typeof enabled === 'string') console.log(`PostgreSQL statement counts from the nodes only: ${enabled}`);
      else pgStatements = enabled;
    }
    for (const column of args.columns) {
      const label = `${column.backend === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${column.nodes} node${column.nodes === 1 ? '' : 's'}`;
      console.log(`\n=== ${label} ===`);
      try {
        columns.push(
          await runColumn({ ...column, recipients: args.recipients, msisdnFor, text: CAMPAIGN_TEXT, sink, carrier, postgres, progressEveryMs: args.progressEveryMs, pgStatements }),
        );
      } catch (err) {
        // One column that stalls (its reason printed) does not cost the others' figures.
        failures.push(`${label}: ${(err as Error).message}`);
        console.log(`${label} did not finish: ${(err as Error).message}`);
      }
    }
  } finally {
    await pgStatements?.close().catch(() => undefined);
    await postgres?.stop();
  }
  if (columns.length === 0) throw new Error(`no column finished:\n${failures.join('\n')}`);
  console.log('');
  console.log(formatRuns(columns.map((c) => c.run)));
  console.log('');
  console.log(formatColumns(columns));
  console.log('');
  console.log(boundNotes(columns));
  for (const column of columns) {
    console.log('');
    console.log(formatColumnCounts(column));
  }
  const targets = formatPairTargets(columns);
  if (targets !== undefined) console.log(`\n${targets}`);
  console.log('\nMarkdown for the README (bench:cluster), this run:\n');
  console.log('| column | end to end msg/s | submitted msg/s | webhooks msg/s | POST -> webhook p50 / p99 | receipt -> webhook p99 | CPU µs/msg: nodes + PostgreSQL | cores busy |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const column of columns) console.log(markdownRow(column));
  for (const failure of failures) console.log(`\nDID NOT FINISH: ${failure.split('\n')[0]}`);
}

runBenchMain(main, USAGE);
