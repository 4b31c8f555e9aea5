/**
 * `npm run bench:smpp-server [-- OPTIONS]`: smsgate's SMPP server under one customer. One bind
 * (transceiver, `--window` submit_sm in flight, on the `smpp` npm package: a fast client, so the
 * figures are smsgate's) submits N messages to a real `smsgate serve` (SQLite, synchronous FULL:
 * each submit_sm_resp comes after its message is durable); smsgate sends them upstream to the
 * receipting test SMSC of bench:e2e in its own process (sink-process.ts: 2 binds x window 100, a
 * receipt per part after --receipt-delay-ms), and the receipts come back to the customer as
 * deliver_sm. Prints submit_sm/s accepted durably, receipts/s delivered, the gateway's CPU
 * microseconds a message and its peak RSS, against the target (5,000 submit_sm/s, receipts keeping
 * pace); asserts nothing.
 *
 * When smsgate has no SMPP server (its config does not know `smppServer`, no `smpp-account`
 * command, or nothing listens on the port) it says so and exits 1.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { smsgateCli } from '../../test/support/cluster-nodes.js';
import { GatewayProcess, writeGatewayConfig } from '../../test/support/gateway-process.js';
import { machineLine, positiveInt, runBenchMain, UsageError } from '../e2e/bench-main.js';
import { monoMs } from '../e2e/clock.js';
import { SinkProcess } from '../e2e/sinks.js';
import { cpuMsOf, peakRssBytesOf } from '../e2e/stats.js';
import { makeTempDir, removeTempDir } from '../e2e/temp-dirs.js';
import { freePort, portAccepts, waitFor } from '../e2e/wait.js';
import { BenchCustomer } from './customer.js';

const USAGE = 'usage: run.js [--messages N] [--window N] [--receipt-delay-ms N] [--credits] [--progress-ms N]';

interface BenchArgs {
  messages: number;
  window: number;
  receiptDelayMs: number;
  /** A paying client (each submit reserves credits); default unlimited. */
  credits: boolean;
  progressEveryMs: number;
}

function parseArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { messages: 50_000, window: 100, receiptDelayMs: 100, credits: false, progressEveryMs: 5_000 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--messages') args.messages = positiveInt(arg, argv[++i]);
    else if (arg === '--window') args.window = positiveInt(arg, argv[++i]);
    else if (arg === '--receipt-delay-ms') args.receiptDelayMs = positiveInt(arg, argv[++i], 0);
    else if (arg === '--credits') args.credits = true;
    else if (arg === '--progress-ms') args.progressEveryMs = positiveInt(arg, argv[++i]);
    else throw new UsageError(`unknown option ${arg}`);
  }
  return args;
}

const TARGET_SUBMITS_PER_SECOND = 5_000;
const ACCOUNT = { client: 'bench', systemId: 'bench', password: 'benchpw' };
const SENDER = 'Bench';
const TEXT = 'Flash sale today only';
const RUN_TIMEOUT_MS = 30 * 60_000;
/** More than any run's parts, so a paying client is never refused. */
const BENCH_CREDITS = 1_000_000_000;

const msisdnFor = (i: number): string => `4477${String(i).padStart(8, '0')}`;

/** The smsgate config: the e2e bench's carrier setup, and the SMPP server on a free port. */
function benchConfig(dir: string, smsc: { host: string; port: number }, smppPort: number, window: number): Record<string, unknown> {
  return {
    database: { path: join(dir, 'smsgate.sqlite') },
    api: { host: '127.0.0.1', port: 0 },
    logging: { level: 'info' },
    transports: [
      {
        name: 'carrier', type: 'smpp', host: smsc.host, port: smsc.port, systemId: 'esme', password: 'secret',
        bindMode: 'transceiver', binds: 2, window: 100, maxPerSecond: 100_000,
      },
    ],
    routes: [{ prefix: '', transport: 'carrier' }],
    smppServer: { host: '127.0.0.1', port: smppPort, windowSize: window, receiptRetentionHours: 72 },
  };
}

/** Says plainly that there is no SMPP server to measure, whichever step found out. */
function noServer(step: string, err: unknown): Error {
  const detail = err instanceof Error ? err.message : String(err);
  return new Error(`bench:smpp-server: smsgate's SMPP server is not there (${step}): ${detail.split('\n').slice(0, 8).join('\n')}`);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  console.log(machineLine());
  const dir = makeTempDir('smsgate-bench-smpp-server-');
  let sink: SinkProcess | undefined;
  let gateway: GatewayProcess | undefined;
  let customer: BenchCustomer | undefined;
  try {
    sink = await SinkProcess.startSmsc({ receiptDelayMs: args.receiptDelayMs, receiptWindow: 256, undeliveredSuffix: 'none' });
    const smppPort = await freePort();
    mkdirSync(dir, { recursive: true });
    let configPath: string;
    try {
      configPath = writeGatewayConfig(dir, benchConfig(dir, sink.address, smppPort, args.window)).path;
    } catch (err) {
      throw noServer('the config', err);
    }
    await smsgateCli(configPath, 'migrate');
    await smsgateCli(configPath, 'client', 'create', '--name', ACCOUNT.client);
    await smsgateCli(configPath, 'sender', 'add', '--client', ACCOUNT.client, '--sender', SENDER, '--type', '0');
    if (args.credits) await smsgateCli(configPath, 'credits', 'set', '--client', ACCOUNT.client, '--credits', String(BENCH_CREDITS));
    try {
      await smsgateCli(configPath, 'smpp-account', 'add', '--client', ACCOUNT.client, '--system-id', ACCOUNT.systemId, '--password', ACCOUNT.password);
    } catch (err) {
      throw noServer('smsgate smpp-account add', err);
    }
    // SMSGATE_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the gateway process.
    const nodeArgs = process.env['SMSGATE_GATEWAY_NODE_ARGS']?.split(' ').filter((a) => a !== '') ?? [];
    gateway = await GatewayProcess.spawn(configPath, { nodeArgs });
    const running = gateway;
    try {
      await waitFor(() => portAccepts(smppPort), 20_000, `smsgate's SMPP server on port ${smppPort}`);
    } catch (err) {
      throw noServer('its port', err);
    }
    await waitFor(() => sink!.progress.boundSessions >= 2, 20_000, 'smsgate bound twice to the SMSC');
    customer = await BenchCustomer.bind('127.0.0.1', smppPort, ACCOUNT.systemId, ACCOUNT.password);
    const bound = customer;

    const cpuAtStartMs = cpuMsOf(running.pid);
    const startedAtMs = monoMs();
    let exited: string | undefined;
    void running.waitForExit().then(({ code, signal }) => {
      exited = `smsgate serve exited (code ${code}, signal ${signal})`;
    });
    const progress = setInterval(() => {
      const p = bound.progress;
      process.stderr.write(`  t=${((monoMs() - startedAtMs) / 1_000).toFixed(0)}s accepted=${p.accepted} upstream=${sink!.progress.submitted} receipts=${p.receipts} rss=${(running.memory().rssBytes / 2 ** 20).toFixed(0)}MB\n`);
    }, args.progressEveryMs);
    try {
      await Promise.race([
        bound.submitAll(args.messages, args.window, (i) => ({
          source_addr_ton: 5, source_addr_npi: 0, source_addr: SENDER, dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: msisdnFor(i),
          registered_delivery: 1, data_coding: 0, short_message: Buffer.from(TEXT, 'latin1'),
        })),
        failWhen(() => exited ?? bound.closed, 'submitting'),
      ]);
      const refused = [...bound.progress.refused].map(([status, n]) => `${n} x 0x${status.toString(16)}`).join(', ');
      if (refused !== '') console.log(`refused submit_sm: ${refused}`);
      await Promise.race([
        waitFor(() => bound.progress.receipts >= bound.progress.accepted, RUN_TIMEOUT_MS, `${bound.progress.accepted} receipts`),
        failWhen(() => exited ?? bound.closed, 'waiting for receipts'),
      ]);
    } finally {
      clearInterval(progress);
    }
    const gatewayCpuMs = cpuMsOf(running.pid) - cpuAtStartMs;
    const peakRssBytes = peakRssBytesOf(running.pid);
    report(args, bound, startedAtMs, gatewayCpuMs, peakRssBytes, sink.cpuMs());
    await bound.unbind();
  } finally {
    customer?.destroy();
    if (gateway !== undefined) await gateway.stop();
    await sink?.stop();
    removeTempDir(dir);
  }
}

/** Rejects once `why()` names a reason (the gateway or the session is gone). */
function failWhen(why: () => string | undefined, during: string): Promise<never> {
  return new Promise((_, reject) => {
    const timer = setInterval(() => {
      const reason = why();
      if (reason === undefined) return;
      clearInterval(timer);
      reject(new Error(`${reason} while ${during}`));
    }, 50);
    timer.unref();
  });
}

function report(args: BenchArgs, customer: BenchCustomer, startedAtMs: number, gatewayCpuMs: number, peakRssBytes: number, sinkCpuMs: number): void {
  const p = customer.progress;
  const submitSeconds = (p.lastAcceptedAtMs - p.firstSubmitAtMs) / 1_000;
  const submitsPerSecond = p.accepted / submitSeconds;
  const receiptSeconds = (p.lastReceiptAtMs - p.firstSubmitAtMs) / 1_000;
  const receiptsPerSecond = p.receipts / receiptSeconds;
  const tailSeconds = (p.lastReceiptAtMs - p.lastAcceptedAtMs) / 1_000;
  const cpuUsPerMessage = (gatewayCpuMs * 1_000) / args.messages;
  const verdict = (ok: boolean): string => (ok ? 'pass' : 'short');
  console.log(
    `setup: one transceiver bind, window ${args.window}, ${args.messages.toLocaleString('en-US')} single-part submit_sm with registered_delivery 1` +
      `${args.credits ? ', a paying client' : ', an unlimited client'}; smsgate serve on SQLite synchronous FULL; upstream 2 binds x window 100 to a receipting SMSC ` +
      `(own process, receipts after ${args.receiptDelayMs} ms)`,
  );
  console.log(`submit_sm accepted durably: ${p.accepted.toLocaleString('en-US')} in ${submitSeconds.toFixed(2)} s = ${Math.round(submitsPerSecond).toLocaleString('en-US')}/s`);
  console.log(`receipts delivered (deliver_sm acknowledged): ${p.receipts.toLocaleString('en-US')} in ${receiptSeconds.toFixed(2)} s from the first submit = ${Math.round(receiptsPerSecond).toLocaleString('en-US')}/s; last receipt ${tailSeconds.toFixed(2)} s after the last submit_sm_resp`);
  console.log(`gateway CPU: ${cpuUsPerMessage.toFixed(0)} us a message (${(gatewayCpuMs / 1_000).toFixed(2)} s, every thread); peak RSS ${(peakRssBytes / 2 ** 20).toFixed(0)} MB (VmHWM); SMSC sink CPU ${(sinkCpuMs / 1_000).toFixed(2)} s`);
  console.log(`wall time ${((monoMs() - startedAtMs) / 1_000).toFixed(2)} s`);
  console.log(`target: >= ${TARGET_SUBMITS_PER_SECOND.toLocaleString('en-US')} submit_sm/s accepted durably: ${verdict(submitsPerSecond >= TARGET_SUBMITS_PER_SECOND)}; ` +
    `receipts keeping pace (receipts/s from the first submit to the last receipt >= 90% of submit_sm/s): ${verdict(receiptsPerSecond >= 0.9 * submitsPerSecond)}`);
}

runBenchMain(main, USAGE);
