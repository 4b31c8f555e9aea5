/**
 * `npm run bench:e2e [-- --recipients N] [--no-kannel] [--no-smsgate] [--kannel-concurrency N]`: one campaign of N recipients (default
 * 100,000) end to end through smsgate (HTTP API -> SQLite -> SMPP to a test SMSC on loopback ->
 * receipts -> signed webhooks to a local receiver), and the same messages through Kannel
 * (bearerbox + smsbox, sendsms over HTTP with dlr-url callbacks, store-type file) to the same
 * kind of SMSC, side by side, with the ratio. Prints figures; asserts nothing.
 */
import { cpus, totalmem } from 'node:os';
import { runKannel } from './kannel-run.js';
import { runSmsgate } from './smsgate-run.js';
import { formatTable, type RunFigures } from './stats.js';

interface BenchArgs {
  recipients: number;
  smsgate: boolean;
  kannel: boolean;
  kannelConcurrency: number;
}

function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { recipients: 100_000, smsgate: true, kannel: true, kannelConcurrency: 32 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--recipients') {
      const value = Number(argv[++i]);
      if (!Number.isInteger(value) || value < 1) throw new Error('--recipients needs a positive integer');
      args.recipients = value;
    } else if (arg === '--no-kannel') {
      args.kannel = false;
    } else if (arg === '--no-smsgate') {
      args.smsgate = false;
    } else if (arg === '--kannel-concurrency') {
      const value = Number(argv[++i]);
      if (!Number.isInteger(value) || value < 1) throw new Error('--kannel-concurrency needs a positive integer');
      args.kannelConcurrency = value;
    } else {
      throw new Error(`unknown option ${arg}; usage: run.js [--recipients N] [--no-kannel] [--no-smsgate] [--kannel-concurrency N]`);
    }
  }
  return args;
}

// One in ten numbers gets an UNDELIV receipt, so both paths are exercised.
const statusFor = (msisdn: string): string => (msisdn.endsWith('9') ? 'UNDELIV' : 'DELIVRD');
const msisdnFor = (i: number): string => `35386${String(i).padStart(7, '0')}`;
const TEXT = 'Flash sale: 20% off everything today only. Reply STOP to opt out.';

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`e2e bench: ${args.recipients} recipients, one GSM-7 part each, receipts on, webhooks/callbacks on`);
  console.log(`machine: ${cpus().length} x ${cpu}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}`);
  const runs: RunFigures[] = [];
  const smsgate = args.smsgate ? await runSmsgate({ recipients: args.recipients, statusFor, msisdnFor, text: TEXT }) : undefined;
  if (smsgate !== undefined) runs.push(smsgate);
  if (args.kannel) {
    const kannel = await runKannel({ recipients: args.recipients, statusFor, msisdnFor, text: TEXT, sendsmsConcurrency: args.kannelConcurrency });
    if (kannel.ok) runs.push(kannel.figures);
    else console.log(`Kannel not run: ${kannel.reason}`);
  }
  console.log('');
  console.log(formatTable(runs));
  for (const run of runs) for (const note of run.notes) console.log(`note (${run.label}): ${note}`);
  const kannel = runs.find((r) => r.label === 'kannel');
  if (kannel !== undefined && smsgate !== undefined) {
    console.log(`\nratio smsgate / kannel, end-to-end messages per second: ${(smsgate.endToEndPerSecond / kannel.endToEndPerSecond).toFixed(2)}x`);
  }
  if (smsgate !== undefined) console.log(`smsgate peak RSS ${smsgate.peakRssMb.toFixed(0)} MB (goal: under 300 MB)`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
