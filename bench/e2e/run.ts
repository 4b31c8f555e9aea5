/**
 * `npm run bench:e2e [-- OPTIONS]`: one campaign of N recipients end to end through smsgate (HTTP
 * API -> SQLite -> SMPP to a receipting test SMSC -> receipts -> signed webhooks to a receiver), and
 * the same messages through Kannel (bearerbox + smsbox, sendsms with dlr-url callbacks, store-type
 * file) to the same kind of SMSC and receiver, in the same run, with the ratio; by default at 50,000
 * and then 100,000 recipients. Prints figures and the targets with pass/short; asserts nothing.
 *
 * The SMSC and the receiver run in processes of their own (sink-process.ts), a fresh pair per run,
 * so neither shares an event loop with the bench driver; every child (gateway, bearerbox, smsbox,
 * SMSC, receiver) is a peer process (test/support/peer-process.ts): stopped at the end of its run,
 * SIGKILLed when the bench exits or fails, and told to stop by the kernel if the bench is killed.
 */
import { machineLine, positiveInt, runBenchMain, UsageError } from './bench-main.js';
import { CAMPAIGN_TEXT, msisdnFor } from './campaign.js';
import { kannelLabel, runKannel, type KannelSetup } from './kannel-run.js';
import { boundNote, formatProfile, formatRuns, formatTargets, markdownSummary } from './report.js';
import type { SmscSinkConfig } from './sink-protocol.js';
import { runSmsgate, type SmsgateRunFigures } from './smsgate-run.js';
import { cpuUsPerMessage, type RunFigures } from './stats.js';
import { formatSqliteCounts } from '../counters/format.js';

const USAGE =
  'usage: run.js [--recipients N] [--no-kannel] [--no-smsgate] [--kannel-setup RxC]... [--no-profile] [--receipt-delay-ms N] [--api-probe-ms N] [--progress-ms N] [--no-counts] [--credits]';

interface BenchArgs {
  sizes: number[];
  smsgate: boolean;
  kannel: boolean;
  kannelSetups: KannelSetup[];
  profile: boolean;
  receiptDelayMs: number;
  apiProbeEveryMs: number;
  progressEveryMs: number;
  counts: boolean;
  /** A client with a balance (reserve at acceptance, a charge per accepted part); default unlimited. */
  credits: boolean;
}

/** The Kannel setup: 100 recipients a request, 4 requests at once. */
const DEFAULT_KANNEL_SETUP: KannelSetup = { recipientsPerRequest: 100, concurrency: 4 };

function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { sizes: [50_000, 100_000], smsgate: true, kannel: true, kannelSetups: [], profile: true, receiptDelayMs: 100, apiProbeEveryMs: 1_000, progressEveryMs: 5_000, counts: true, credits: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--recipients') args.sizes = [positiveInt(arg, argv[++i])];
    else if (arg === '--no-kannel') args.kannel = false;
    else if (arg === '--no-smsgate') args.smsgate = false;
    else if (arg === '--no-profile') args.profile = false;
    else if (arg === '--no-counts') args.counts = false;
    else if (arg === '--credits') args.credits = true;
    else if (arg === '--receipt-delay-ms') args.receiptDelayMs = positiveInt(arg, argv[++i], 0);
    else if (arg === '--api-probe-ms') args.apiProbeEveryMs = positiveInt(arg, argv[++i], 0);
    else if (arg === '--progress-ms') args.progressEveryMs = positiveInt(arg, argv[++i]);
    else if (arg === '--kannel-setup') {
      const raw = argv[++i] ?? '';
      const match = /^(\d+)x(\d+)$/.exec(raw);
      if (match === null) throw new UsageError(`--kannel-setup needs RECIPIENTS_PER_REQUESTxCONCURRENCY, e.g. 100x4 or 1x32; got ${raw || 'nothing'}`);
      args.kannelSetups.push({ recipientsPerRequest: positiveInt(arg, match[1]), concurrency: positiveInt(arg, match[2]) });
    } else throw new UsageError(`unknown option ${arg}`);
  }
  if (args.kannelSetups.length === 0) args.kannelSetups.push(DEFAULT_KANNEL_SETUP);
  return args;
}

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  // One in ten numbers gets an UNDELIV receipt, so both receipt paths are exercised.
  const sink: SmscSinkConfig = { receiptDelayMs: args.receiptDelayMs, receiptWindow: 256, undeliveredSuffix: '9' };
  console.log(`e2e bench: ${args.sizes.map((n) => n.toLocaleString('en-US')).join(' and ')} recipients, one GSM-7 part each, receipts on, webhooks/callbacks on`);
  console.log(machineLine());
  console.log(
    `sink: the receipting test SMSC (smpp package server) in its own process, receipt offered ${sink.receiptDelayMs} ms after each submit, ` +
      `${sink.receiptWindow} deliver_sm in flight, numbers ending in 9 UNDELIV; webhook receiver in its own process; a fresh pair per run, the same for smsgate and Kannel`,
  );
  const summary: { smsgate: RunFigures | undefined; kannel: RunFigures[] }[] = [];
  for (const recipients of args.sizes) {
    console.log(`\n=== ${recipients.toLocaleString('en-US')} recipients ===`);
    const runs: RunFigures[] = [];
    let smsgate: SmsgateRunFigures | undefined;
    if (args.smsgate) {
      smsgate = await runSmsgate({ recipients, msisdnFor, text: CAMPAIGN_TEXT, sink, profile: args.profile, progressEveryMs: args.progressEveryMs, apiProbeEveryMs: args.apiProbeEveryMs, counts: args.counts, credits: args.credits });
      runs.push(smsgate);
    }
    const kannelRuns: RunFigures[] = [];
    if (args.kannel) {
      for (const setup of args.kannelSetups) {
        const kannel = await runKannel({ recipients, msisdnFor, text: CAMPAIGN_TEXT, sink, setup, progressEveryMs: args.progressEveryMs });
        if (kannel.ok) kannelRuns.push(kannel.figures);
        else console.log(`${kannelLabel(setup)} not run: ${kannel.reason}`);
      }
      runs.push(...kannelRuns);
    }
    summary.push({ smsgate, kannel: kannelRuns });
    console.log('');
    console.log(formatRuns(runs));
    if (smsgate !== undefined) {
      console.log('');
      console.log(formatTargets(smsgate, kannelRuns));
      const bound = boundNote(smsgate, kannelRuns);
      if (bound !== undefined) console.log(`\n${bound}`);
      console.log('');
      console.log(formatProfile(smsgate));
      if (smsgate.sqliteCounts !== undefined) {
        console.log('');
        console.log(formatSqliteCounts(`smsgate, ${recipients.toLocaleString('en-US')} recipients, gateway CPU ${Math.round(cpuUsPerMessage(smsgate))} µs a message`, smsgate.sqliteCounts, smsgate.messages));
      }
    }
  }
  if (summary.some((s) => s.smsgate !== undefined)) {
    console.log('\nMarkdown for the README (bench:e2e), this run:\n');
    console.log(markdownSummary(summary));
  }
}

runBenchMain(main, USAGE);
