/**
 * The Kannel side of the e2e bench: bearerbox + smsbox (Debian package `kannel`) with a generated
 * kannel.conf, two smpp smsc groups bound to the same receipting test SMSC (in its own process, as
 * for smsgate), messages sent through smsbox's sendsms HTTP interface with dlr-mask 3 (delivered |
 * failed) and a dlr-url callback to the same kind of receiver, store-type file. When Kannel is
 * missing or does not start, says why.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { kannelConf, kannelLogTails } from '../../test/support/kannel-customer.js';
import { spawnPeer, stopPeers } from '../../test/support/peer-process.js';
import { monoMs } from './clock.js';
import { collectSinks, runFigures, startHarnessMeter } from './run-figures.js';
import { startSinks, stopSinks, type RunSinks } from './sinks.js';
import { makeTempDir, removeTempDir } from './temp-dirs.js';
import type { SmscSinkConfig } from './sink-protocol.js';
import { cpuMsOf, peakRssBytesOf, syscallsBetween, syscallsOf, type RunFigures, type Syscalls } from './stats.js';
import { freePort, portAccepts, waitFor, waitForCount } from './wait.js';

/** How the sendsms client drives smsbox: recipients in one request's `to`, and requests in flight. */
export interface KannelSetup {
  recipientsPerRequest: number;
  concurrency: number;
}

export interface KannelRunOptions {
  recipients: number;
  msisdnFor: (i: number) => string;
  text: string;
  sink: SmscSinkConfig;
  setup: KannelSetup;
  progressEveryMs: number;
}

export type KannelRunResult = { ok: true; figures: RunFigures } | { ok: false; reason: string };

const BEARERBOX = '/usr/sbin/bearerbox';
const SMSBOX = '/usr/sbin/smsbox';

export function kannelLabel(setup: KannelSetup): string {
  return `kannel ${setup.recipientsPerRequest}x${setup.concurrency}`;
}

export function kannelSetupLine(setup: KannelSetup): string {
  return (
    `Kannel 1.4.5 bearerbox + smsbox, sendsms over HTTP keep-alive: ${setup.recipientsPerRequest} recipient(s) a request, ` +
    `${setup.concurrency} concurrent requests; store-type file, dlr-storage internal, dlr-mask 3 + dlr-url callbacks; ` +
    '2 SMPP binds x max-pending-submits 100, no throughput cap, log-level 3'
  );
}

export async function runKannel(options: KannelRunOptions): Promise<KannelRunResult> {
  if (!existsSync(BEARERBOX) || !existsSync(SMSBOX)) {
    return { ok: false, reason: `${BEARERBOX} or ${SMSBOX} not found (install the Debian package: apt-get install -y kannel)` };
  }
  const dir = makeTempDir('smsgate-bench-kannel-');
  const boxes: ChildProcess[] = [];
  let sinks: RunSinks | undefined;
  try {
    sinks = await startSinks(options.sink, { secret: null });
    const { smsc, receiver } = sinks;
    const ports = { admin: await freePort(), smsbox: await freePort(), sendsms: await freePort() };
    const confPath = join(dir, 'kannel.conf');
    writeFileSync(confPath, benchKannelConf(dir, ports, smsc.address));
    // Peers: own process group, told to stop if the bench dies, killed on its exit.
    boxes.push(spawnPeer(BEARERBOX, [confPath], { stdio: 'ignore' }));
    await waitFor(() => portAccepts(ports.smsbox), 15_000, 'bearerbox smsbox-port');
    boxes.push(spawnPeer(SMSBOX, [confPath], { stdio: 'ignore' }));
    await waitFor(() => portAccepts(ports.sendsms), 15_000, 'smsbox sendsms-port');
    await waitFor(() => smsc.progress.boundSessions >= 2, 15_000, 'Kannel binding twice to the SMSC');

    const dlrUrl = `${receiver.address.url}?to=%p&type=%d`;
    // A plain keep-alive agent, one socket per concurrent request: cheap per request, so the
    // harness's client costs Kannel's side as little as it can.
    const agent = new Agent({ keepAlive: true, maxSockets: options.setup.concurrency });
    const boxesCpuMs = (): number => boxes.reduce((sum, box) => sum + cpuMsOf(box.pid), 0);
    const harness = startHarnessMeter(smsc, receiver);
    const cpuAtStartMs = boxesCpuMs();
    const boxesSyscalls = (): Syscalls => boxes.map((box) => syscallsOf(box.pid)).reduce((sum, one) => ({ reads: sum.reads + one.reads, writes: sum.writes + one.writes }), { reads: 0, writes: 0 });
    const syscallsAtStart = boxesSyscalls();
    const startedAtMs = monoMs();
    let next = 0;
    let refused = 0;
    const sendBatch = async (from: number, to: number): Promise<void> => {
      const numbers = Array.from({ length: to - from }, (_, k) => options.msisdnFor(from + k));
      // sendsms: several receivers in `to`, separated by spaces, each get the message (Kannel user guide, "Kannel HTTP interface").
      const query = new URLSearchParams({
        username: 'bench', password: 'bench', from: 'Bench', to: numbers.join(' '), text: options.text,
        'dlr-mask': '3', 'dlr-url': dlrUrl,
      });
      const status = await httpGet(agent, ports.sendsms, `/cgi-bin/sendsms?${query.toString()}`);
      if (status !== 202 && status !== 200) refused += to - from;
    };
    const sending = Promise.all(
      Array.from({ length: options.setup.concurrency }, async () => {
        while (next < options.recipients) {
          const from = next;
          next = Math.min(options.recipients, next + options.setup.recipientsPerRequest);
          await sendBatch(from, next);
        }
      }),
    );
    const label = kannelLabel(options.setup);
    const progressLine = (): string =>
      `sent=${next} submits=${smsc.progress.submitted} receipts=${smsc.progress.receiptsAcknowledged} callbacks=${receiver.progress.webhooksAcknowledged}`;
    await sending;
    const acceptedAtMs = monoMs() - startedAtMs;
    agent.destroy();
    if (refused > 0) return { ok: false, reason: `smsbox refused ${refused} recipients' sendsms requests` };
    await waitForCount(() => receiver.progress.webhooksAcknowledged, options.recipients, {
      label, sinks: [smsc, receiver], startedAtMs, progressEveryMs: options.progressEveryMs, line: progressLine,
      gatewayGone: () => {
        const gone = boxes.find((box) => box.exitCode !== null || box.signalCode !== null);
        return gone === undefined ? undefined : `${gone.spawnargs.join(' ')} exited (code ${gone.exitCode}, signal ${gone.signalCode}); ${kannelLogTails(dir)}`;
      },
    });
    const finishedAtMs = monoMs();
    const gatewayCpuMs = boxesCpuMs() - cpuAtStartMs;
    const syscalls = syscallsBetween(syscallsAtStart, boxesSyscalls());
    const harnessFigures = harness.stop();
    const peakRssBytes = boxes.reduce((sum, box) => sum + peakRssBytesOf(box.pid), 0);
    const { sink, receiverEvents } = await collectSinks(smsc, receiver, startedAtMs);
    const notes = ['peak RSS is bearerbox VmHWM + smsbox VmHWM; CPU is both boxes, every thread; accepted = every sendsms request answered'];
    if (receiverEvents.unidentified > 0) notes.push(`${receiverEvents.unidentified} callbacks named no recipient`);
    return {
      ok: true,
      // Kannel logs no "campaign ready": no ready stage.
      figures: runFigures({
        label,
        setup: kannelSetupLine(options.setup),
        messages: options.recipients,
        acceptedAtMs,
        readyAtMs: undefined,
        startedAtMs,
        finishedAtMs,
        sink,
        harness: harnessFigures,
        gatewayCpuMs,
        syscalls,
        peakRssBytes,
        notes,
      }),
    };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  } finally {
    // smsbox first, then bearerbox: SIGTERM, SIGKILL after 5 s.
    await stopPeers(boxes.reverse());
    await stopSinks(sinks);
    removeTempDir(dir);
  }
}

/**
 * Kannel's side set up for speed, like smsgate's (settings from the Kannel 1.4 user guide), written
 * by the same kannelConf the tests' Kannel customer uses:
 * - store-type file with dlr-storage internal: durable queue, no database round trip per DLR;
 * - two smsc groups with one smsc-id, i.e. two SMPP binds balanced by bearerbox, as smsgate's
 *   `binds: 2`; max-pending-submits 100 per bind (smsgate: window 100 per bind); no `throughput`,
 *   so nothing caps the submit rate; msg-id-type 0x00: the sink's ids are decimal numbers;
 * - log-level 3 (errors only) and no access-log: no per-message log line on either side;
 * - smsbox max-pending-requests 512 (dlr-url callbacks in flight).
 * immediate-sendsms-reply stays off: sendsms answers once bearerbox has queued the message, as
 * smsgate answers POST /v1/campaign once the campaign is in SQLite.
 */
function benchKannelConf(dir: string, ports: { admin: number; smsbox: number; sendsms: number }, smsc: { host: string; port: number }): string {
  return kannelConf({
    dir,
    ports,
    adminPassword: 'bench',
    logLevel: 3,
    smsc: { smscId: 'bench', host: smsc.host, port: smsc.port, systemId: 'esme', password: 'secret', binds: 2, maxPendingSubmits: 100, msgIdType: 0x00, logLevel: 3 },
    sendsmsUser: { username: 'bench', password: 'bench' },
    maxPendingRequests: 512,
  });
}

function httpGet(agent: Agent, port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end();
  });
}
