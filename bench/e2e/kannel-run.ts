/**
 * The Kannel side of the e2e bench: bearerbox + smsbox (Debian package `kannel`) with a generated
 * kannel.conf, an smpp smsc group bound to the same kind of test SMSC, messages sent through
 * smsbox's sendsms HTTP interface with dlr-mask 3 (delivered | failed) and a dlr-url callback to
 * a local receiver, store-type file. When Kannel is missing or does not start, says why.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReceiptingSmsc } from '../../test/support/receipting-smsc.js';
import { WebhookReceiver } from '../../test/support/webhook-receiver.js';
import { CounterClock, cpuMsOf, type RunFigures } from './stats.js';

export interface KannelRunOptions {
  recipients: number;
  statusFor: (msisdn: string) => string;
  msisdnFor: (i: number) => string;
  text: string;
  /** sendsms requests in flight at once (HTTP keep-alive connections to smsbox). */
  sendsmsConcurrency: number;
}

export type KannelRunResult = { ok: true; figures: RunFigures } | { ok: false; reason: string };

const BEARERBOX = '/usr/sbin/bearerbox';
const SMSBOX = '/usr/sbin/smsbox';

export async function runKannel(options: KannelRunOptions): Promise<KannelRunResult> {
  if (!existsSync(BEARERBOX) || !existsSync(SMSBOX)) {
    return { ok: false, reason: `${BEARERBOX} or ${SMSBOX} not found (install the Debian package: apt-get install -y kannel)` };
  }
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-bench-kannel-'));
  const smsc = await ReceiptingSmsc.start({ statusFor: options.statusFor, countByDestination: false, receiptWindow: 256 });
  const receiver = await WebhookReceiver.start({ keepBodies: false, keepRequests: false });
  const boxes: ChildProcess[] = [];
  try {
    const ports = { admin: await freePort(), smsbox: await freePort(), sendsms: await freePort() };
    const confPath = join(dir, 'kannel.conf');
    writeFileSync(confPath, kannelConf(dir, ports, smsc.address));
    boxes.push(spawn(BEARERBOX, [confPath], { stdio: 'ignore' }));
    await waitForPort(ports.smsbox, 15_000, 'bearerbox smsbox-port');
    boxes.push(spawn(SMSBOX, [confPath], { stdio: 'ignore' }));
    await waitForPort(ports.sendsms, 15_000, 'smsbox sendsms-port');
    await waitUntil(() => smsc.smsc.boundSessions().length > 0, 15_000, 'Kannel binding to the SMSC');

    const submits = new CounterClock(() => smsc.submitCount);
    const receipts = new CounterClock(() => smsc.receiptsAcknowledged);
    const callbacks = new CounterClock(() => receiver.acknowledged);
    let peakRssBytes = 0;
    const sampler = setInterval(() => {
      const now = performance.now();
      submits.sample(now);
      receipts.sample(now);
      callbacks.sample(now);
      peakRssBytes = Math.max(peakRssBytes, boxes.reduce((sum, box) => sum + peakRssOf(box.pid), 0));
    }, 20);

    const dlrUrl = `${receiver.url}?to=%p&type=%d`;
    // A plain keep-alive agent, one socket per concurrent request: cheaper per request than fetch,
    // so the harness's client costs Kannel's side as little as it can.
    const agent = new Agent({ keepAlive: true, maxSockets: options.sendsmsConcurrency });
    const cpuAtStartMs = boxes.reduce((sum, box) => sum + cpuMsOf(box.pid), 0);
    const harnessCpuAtStart = process.cpuUsage();
    const startedAt = performance.now();
    let next = 0;
    let refused = 0;
    const sendOne = async (i: number): Promise<void> => {
      const query = new URLSearchParams({
        username: 'bench', password: 'bench', from: 'Bench', to: options.msisdnFor(i), text: options.text,
        'dlr-mask': '3', 'dlr-url': dlrUrl,
      });
      const status = await httpGet(agent, ports.sendsms, `/cgi-bin/sendsms?${query.toString()}`);
      if (status !== 202 && status !== 200) refused++;
    };
    await Promise.all(
      Array.from({ length: options.sendsmsConcurrency }, async () => {
        while (next < options.recipients) await sendOne(next++);
      }),
    );
    const acceptMs = performance.now() - startedAt;
    agent.destroy();
    if (refused > 0) return { ok: false, reason: `smsbox refused ${refused} sendsms requests` };
    await waitUntil(() => receiver.acknowledged >= options.recipients, 30 * 60_000, 'every dlr-url callback');
    const finishedAt = performance.now();
    clearInterval(sampler);
    for (const clock of [submits, receipts, callbacks]) clock.sample(finishedAt);
    const timeToLastWebhookMs = finishedAt - startedAt;
    const gatewayCpuMs = boxes.reduce((sum, box) => sum + cpuMsOf(box.pid), 0) - cpuAtStartMs;
    const harness = process.cpuUsage(harnessCpuAtStart);
    return {
      ok: true,
      figures: {
        label: 'kannel',
        messages: options.recipients,
        submitsPerSecond: submits.perSecond(),
        receiptsPerSecond: receipts.perSecond(),
        webhooksPerSecond: callbacks.perSecond(),
        timeToLastWebhookMs,
        endToEndPerSecond: options.recipients / (timeToLastWebhookMs / 1_000),
        peakRssMb: peakRssBytes / 1_048_576,
        apiP50Ms: Number.NaN,
        apiP99Ms: Number.NaN,
        acceptMs,
        gatewayCpuMs,
        harnessCpuMs: (harness.user + harness.system) / 1_000,
        notes: ['peak RSS and CPU are bearerbox + smsbox; accept = every sendsms request answered'],
      },
    };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  } finally {
    for (const box of boxes.reverse()) await stopBox(box);
    await receiver.close();
    await smsc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Kannel's side set up for speed, like smsgate's (settings from the Kannel 1.4 user guide):
 * - store-type file with dlr-storage internal: durable queue, no database round trip per DLR;
 * - two smsc groups with one smsc-id, i.e. two SMPP binds balanced by bearerbox, as smsgate's
 *   `binds: 2`; max-pending-submits 100 per bind (smsgate: window 100 per bind); no `throughput`,
 *   so nothing caps the submit rate;
 * - log-level 3 (errors only) and no access-log: no per-message log line on either side;
 * - smsbox max-pending-requests 512 (dlr-url callbacks in flight), the sendsms client sends with
 *   keep-alive and many requests in flight (--kannel-concurrency).
 * immediate-sendsms-reply stays off: sendsms answers once bearerbox has queued the message, as
 * smsgate answers POST /v1/campaign once the campaign is in SQLite.
 */
function kannelConf(dir: string, ports: { admin: number; smsbox: number; sendsms: number }, smsc: { host: string; port: number }): string {
  const smscGroup = `group = smsc
smsc = smpp
smsc-id = bench
host = ${smsc.host}
port = ${smsc.port}
transceiver-mode = true
smsc-username = esme
smsc-password = secret
system-type = ""
max-pending-submits = 100
msg-id-type = 0x00
log-level = 3
`;
  return `group = core
admin-port = ${ports.admin}
admin-password = bench
smsbox-port = ${ports.smsbox}
box-allow-ip = 127.0.0.1
log-file = "${join(dir, 'bearerbox.log')}"
log-level = 3
store-type = file
store-location = "${join(dir, 'kannel.store')}"
dlr-storage = internal

${smscGroup}
${smscGroup}
group = smsbox
bearerbox-host = 127.0.0.1
sendsms-port = ${ports.sendsms}
log-file = "${join(dir, 'smsbox.log')}"
log-level = 3
max-pending-requests = 512

group = sendsms-user
username = bench
password = bench
concatenation = true
max-messages = 10
`;
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

function peakRssOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

async function stopBox(box: ChildProcess): Promise<void> {
  if (box.exitCode !== null || box.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => box.once('exit', () => resolve()));
  box.kill('SIGTERM');
  const timer = setTimeout(() => box.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs: number, what: string): Promise<void> {
  await waitUntilAsync(
    () =>
      new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      }),
    timeoutMs,
    what,
  );
}

function waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  return waitUntilAsync(async () => check(), timeoutMs, what);
}

async function waitUntilAsync(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
