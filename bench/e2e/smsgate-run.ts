/**
 * One smsgate run of the e2e bench: a real `smsgate serve` child (under `--cpu-prof`), one campaign
 * of N recipients through the HTTP API, SMPP to the receipting test SMSC in its own process,
 * signed webhooks to a receiver in its own process. Every stage is timestamped where it happens
 * (the SMSC, the receiver, the gateway's "campaign ready" log line) on one monotonic clock.
 */
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayProcess, seedAccount, writeGatewayConfig } from '../../test/support/gateway-process.js';
import { campaignBody, postCampaign, readyTimeOf, webhookNotes } from './campaign.js';
import { monoMs } from './clock.js';
import { summariseProfiles } from './cpu-profile.js';
import { collectSinks, runFigures, startHarnessMeter } from './run-figures.js';
import { startSinks, stopSinks, type RunSinks } from './sinks.js';
import { makeTempDir, removeTempDir } from './temp-dirs.js';
import { rssSplitNote, rssSplitOf, samplePeakRss } from './memory-split.js';
import { cpuMsOf, mainThreadTimesOf, percentile, peakRssBytesOf, syscallsBetween, syscallsOf, type EventLoopFigures, type RunFigures } from './stats.js';
import type { SmscSinkConfig } from './sink-protocol.js';
import { freePort, waitFor, waitForCount } from './wait.js';
import { openStore } from '../../src/store/sqlite/database.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';
import { counterNodeArgs, COUNTS_DIR_ENV, countsOf, diffCounts, makeCountsDir, readCounts, type Counts } from '../counters/snapshot.js';

export interface SmsgateRunOptions {
  recipients: number;
  msisdnFor: (i: number) => string;
  text: string;
  sink: SmscSinkConfig;
  /** Run the gateway under --cpu-prof and summarise the profile (a few % of CPU). */
  profile: boolean;
  progressEveryMs: number;
  /** GET /v1/campaign/{id} this often while the campaign runs (a dashboard); 0: never. */
  apiProbeEveryMs: number;
  /** Count the gateway's SQLite statements (bench/counters/preload.ts, loaded with --import). */
  counts: boolean;
  /**
   * Give the client a balance before the run, so the campaign reserves at acceptance and each
   * accepted part is charged (the accounts' cost); false: an unlimited client, as before credits.
   */
  credits: boolean;
}

/** A smsgate run's figures and, when counted, its SQLite statements from the POST to the last webhook. */
export type SmsgateRunFigures = RunFigures & { sqliteCounts: Counts | undefined };

/** A paid client's balance: more than any run's parts, so the campaign is never refused. */
const BENCH_CREDITS = 1_000_000_000;

/** A top-up through the credits store, as `smsgate credits add` writes it. */
async function topUp(databasePath: string, clientName: string, credits: number): Promise<void> {
  const store = await openStore({ path: databasePath });
  try {
    await sqliteStorePorts(store).credits.add(clientName, credits, 'bench', Date.now());
  } finally {
    await store.close();
  }
}

/** How long to wait after the run for the gateway's counters to be written once more (preload.ts writes every 1,000 ms). */
const COUNTS_SETTLE_MS = 1_300;

const SECRET = 'bench-webhook-secret';

function setupLine(options: SmsgateRunOptions): string {
  return (
    `smsgate serve (own process${options.profile ? ', --cpu-prof' : ''}${options.counts ? ', statement counters' : ''}), SQLite synchronous=${process.env['SMSGATE_BENCH_SYNC'] === 'NORMAL' ? 'NORMAL' : 'FULL'}, ` +
    'SMPP 2 binds x window 100, no rate cap, webhooks.concurrency 64, admin listener on; one POST /v1/campaign' +
    (options.apiProbeEveryMs > 0 ? `, then GET /v1/campaign/{id} every ${options.apiProbeEveryMs} ms` : '')
  );
}

export async function runSmsgate(options: SmsgateRunOptions): Promise<SmsgateRunFigures> {
  const dir = makeTempDir('smsgate-bench-e2e-');
  const countsDir = makeCountsDir(dir);
  const profileDir = join(dir, 'profile');
  mkdirSync(profileDir);
  const notes: string[] = [];
  let sinks: RunSinks | undefined;
  let gateway: GatewayProcess | undefined;
  try {
    sinks = await startSinks(options.sink, { secret: SECRET });
    const { smsc, receiver } = sinks;
    const adminPort = await freePort();
    const { path, config } = writeGatewayConfig(dir, {
      database: { path: join(dir, 'smsgate.sqlite'), ...(process.env['SMSGATE_BENCH_SYNC'] === 'NORMAL' ? { synchronous: 'NORMAL' } : {}) },
      api: { host: '127.0.0.1', port: 0 },
      admin: { host: '127.0.0.1', port: adminPort },
      logging: { level: 'info' },
      webhooks: { concurrency: 64 },
      transports: [
        {
          name: 'carrier', type: 'smpp', host: smsc.address.host, port: smsc.address.port, systemId: 'esme', password: 'secret',
          bindMode: 'transceiver', binds: 2, window: 100, maxPerSecond: 100_000,
        },
      ],
      routes: [{ prefix: '', transport: 'carrier' }],
    });
    const account = await seedAccount(config, { webhookUrl: receiver.address.url, webhookSecret: SECRET, senders: [{ name: 'Bench', type: 0 }] });
    if (options.credits) await topUp(config.database.path, account.clientName, BENCH_CREDITS);
    // SMSGATE_GATEWAY_NODE_ARGS adds node options for the gateway (e.g. --max-old-space-size=256).
    const extraNodeArgs = process.env['SMSGATE_GATEWAY_NODE_ARGS']?.split(' ').filter((a) => a !== '') ?? [];
    const nodeArgs = [...(options.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), ...(options.counts ? counterNodeArgs() : []), ...extraNodeArgs];
    gateway = await GatewayProcess.spawn(path, { nodeArgs, env: options.counts ? { [COUNTS_DIR_ENV]: countsDir } : {} });
    const running = gateway;
    let exited: string | undefined;
    void running.waitForExit().then(({ code, signal }) => {
      exited = `smsgate serve exited (code ${code}, signal ${signal})`;
    });
    const adminUrl = `http://127.0.0.1:${adminPort}`;
    await waitFor(async () => (await fetch(`${adminUrl}/metrics`).catch(() => undefined))?.ok === true, 15_000, 'the admin listener');

    const body = campaignBody(options);
    // prom-client's event-loop histogram (perf_hooks.monitorEventLoopDelay) is reset at each
    // scrape: this one makes the scrape at the end cover exactly the run.
    await scrapeMetrics(adminUrl);
    const harness = startHarnessMeter(smsc, receiver);
    const idleRss = rssSplitOf(running.pid);
    const rssSampler = samplePeakRss(running.pid);
    const countsAtStart = countsOf(readCounts(countsDir), [running.pid]);
    const cpuAtStart = { all: cpuMsOfGateway(running), main: mainThreadTimesOf(running.pid) };
    const syscallsAtStart = syscallsOf(running.pid);
    const startedAtEpochMs = Date.now();
    const startedAtMs = monoMs();
    const { id, acceptedAtMs } = await postCampaign(running.baseUrl, account.token, body, startedAtMs);

    // API latency while the campaign runs: one summary request every apiProbeEveryMs (a dashboard).
    const latenciesMs: number[] = [];
    let probing = options.apiProbeEveryMs > 0;
    const probe = (async () => {
      while (probing) {
        const t = performance.now();
        const r = await fetch(`${running.baseUrl}/v1/campaign/${id}`, { headers: { authorization: `Bearer ${account.token}` } });
        await r.arrayBuffer();
        latenciesMs.push(performance.now() - t);
        await new Promise((resolve) => setTimeout(resolve, options.apiProbeEveryMs));
      }
    })();

    await waitForCount(() => receiver.progress.webhooksAcknowledged, options.recipients, {
      label: 'smsgate',
      sinks: [smsc, receiver],
      startedAtMs,
      progressEveryMs: options.progressEveryMs,
      gatewayGone: () => (exited === undefined ? undefined : `${exited}; its last log lines:\n${running.logLines.slice(-10).join('\n')}`),
      line: () => {
        const { rssBytes, peakRssBytes } = running.memory();
        return `submits=${smsc.progress.submitted} receipts=${smsc.progress.receiptsAcknowledged} webhooks=${receiver.progress.webhooksAcknowledged} rss=${mb(rssBytes)}MB peak=${mb(peakRssBytes)}MB`;
      },
    });
    const finishedAtMs = monoMs();
    const gatewayCpuMs = cpuMsOfGateway(running) - cpuAtStart.all;
    const syscalls = syscallsBetween(syscallsAtStart, syscallsOf(running.pid));
    const mainAtEnd = mainThreadTimesOf(running.pid);
    const mainThread = { cpuMs: mainAtEnd.cpuMs - cpuAtStart.main.cpuMs, runqueueMs: mainAtEnd.runqueueMs - cpuAtStart.main.runqueueMs };
    const harnessFigures = harness.stop();
    probing = false;
    await probe;
    const metrics = await scrapeMetrics(adminUrl);
    let sqliteCounts: Counts | undefined;
    if (options.counts) {
      await new Promise((resolve) => setTimeout(resolve, COUNTS_SETTLE_MS));
      sqliteCounts = diffCounts(countsOf(readCounts(countsDir), [running.pid]), countsAtStart);
    }
    const peakRssBytes = peakRssBytesOf(running.pid);
    notes.push(
      rssSplitNote(idleRss, rssSampler.stop(), {
        totalBytes: metricValue(metrics, 'nodejs_heap_size_total_bytes'),
        usedBytes: metricValue(metrics, 'nodejs_heap_size_used_bytes'),
      }),
    );
    const { sink, receiverEvents } = await collectSinks(smsc, receiver, startedAtMs);
    notes.push(...webhookNotes(receiver, receiverEvents));

    const exitCode = await running.stop();
    if (exitCode !== 0) notes.push(`smsgate serve exited ${exitCode} on SIGTERM`);
    const profile = options.profile ? summariseProfiles(profileDir, startedAtMs, finishedAtMs) : undefined;
    if (options.profile && profile === undefined) notes.push('no CPU profile was written');

    const readyAtMs = readyTimeOf(running.logLines, startedAtEpochMs);
    if (readyAtMs === undefined) notes.push('no "campaign ready" log line seen');
    const figures = runFigures(
      {
        label: 'smsgate',
        setup: setupLine(options),
        messages: options.recipients,
        acceptedAtMs,
        readyAtMs,
        startedAtMs,
        finishedAtMs,
        sink,
        harness: harnessFigures,
        gatewayCpuMs,
        syscalls,
        peakRssBytes,
        notes,
      },
      {
        mainThread,
        eventLoop: eventLoopOf(metrics),
        ownWebhookLag: ownWebhookLagOf(metrics),
        api: latenciesMs.length === 0 ? undefined : { p50Ms: percentile(latenciesMs, 50), p99Ms: percentile(latenciesMs, 99), count: latenciesMs.length },
        profile,
      },
    );
    return { ...figures, sqliteCounts };
  } finally {
    gateway?.kill('SIGKILL');
    await stopSinks(sinks);
    // SMSGATE_BENCH_KEEP_PROFILE=<dir> keeps the .cpuprofile files (open them in Chrome DevTools) past the run.
    const keep = process.env['SMSGATE_BENCH_KEEP_PROFILE'];
    if (keep !== undefined && keep !== '') cpSync(profileDir, keep, { recursive: true });
    removeTempDir(dir);
  }
}

function cpuMsOfGateway(gateway: GatewayProcess): number {
  // Every thread of the serve process (the event loop, libuv's pool, V8's GC helpers, the profiler).
  return cpuMsOf(gateway.pid);
}

async function scrapeMetrics(adminUrl: string): Promise<string> {
  const response = await fetch(`${adminUrl}/metrics`);
  return response.ok ? await response.text() : '';
}

function metricValue(metrics: string, name: string): number {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(metrics);
  return match?.[1] === undefined ? Number.NaN : Number(match[1]);
}

/** A bucket of a prom-client histogram: `name_bucket{le="1"} 123`. */
function bucketValue(metrics: string, name: string, le: string): number {
  const match = new RegExp(`^${name}_bucket\\{le="${le.replace('+', '\\+')}"\\} ([0-9.eE+-]+)$`, 'm').exec(metrics);
  return match?.[1] === undefined ? Number.NaN : Number(match[1]);
}

function ownWebhookLagOf(metrics: string): RunFigures['ownWebhookLag'] {
  const name = 'smsgate_webhook_lag_seconds';
  const count = bucketValue(metrics, name, '+Inf');
  if (!(count > 0)) return undefined;
  return { count, within1s: bucketValue(metrics, name, '1') / count, within2500ms: bucketValue(metrics, name, '2.5') / count };
}

function eventLoopOf(metrics: string): EventLoopFigures | undefined {
  const p99 = metricValue(metrics, 'nodejs_eventloop_lag_p99_seconds');
  if (Number.isNaN(p99)) return undefined;
  return {
    p99Ms: p99 * 1_000,
    maxMs: metricValue(metrics, 'nodejs_eventloop_lag_max_seconds') * 1_000,
    source: 'admin /metrics nodejs_eventloop_lag_{p99,max}_seconds (prom-client: monitorEventLoopDelay, 10 ms resolution), reset at the POST, read at the last webhook',
  };
}

function mb(bytes: number): string {
  return (bytes / 1_048_576).toFixed(0);
}
