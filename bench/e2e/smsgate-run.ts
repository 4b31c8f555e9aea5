/**
 * One smsgate run of the e2e bench: a real `smsgate serve` child process (so the SMSC and the
 * webhook receiver in this process do not count towards its memory), one campaign of N recipients
 * through the HTTP API, SMPP to the test SMSC with receipts, signed webhooks to a local receiver.
 */
import { rmSync } from 'node:fs';
import { GatewayProcess, seedAccount, writeGatewayConfig } from '../../test/support/gateway-process.js';
import { ReceiptingSmsc } from '../../test/support/receipting-smsc.js';
import { WebhookReceiver } from '../../test/support/webhook-receiver.js';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { CounterClock, cpuMsOf, percentile, type RunFigures } from './stats.js';

export interface SmsgateRunOptions {
  recipients: number;
  statusFor: (msisdn: string) => string;
  msisdnFor: (i: number) => string;
  text: string;
}

const SECRET = 'bench-webhook-secret';

export async function runSmsgate(options: SmsgateRunOptions): Promise<RunFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-bench-e2e-'));
  const smsc = await ReceiptingSmsc.start({ statusFor: options.statusFor, countByDestination: false, receiptWindow: 256 });
  const receiver = await WebhookReceiver.start({ secret: SECRET, keepBodies: false, keepRequests: false });
  const notes: string[] = [];
  let gateway: GatewayProcess | undefined;
  try {
    const { path, config } = writeGatewayConfig(dir, {
      database: { path: join(dir, 'smsgate.sqlite'), ...(process.env['SMSGATE_BENCH_SYNC'] === 'NORMAL' ? { synchronous: 'NORMAL' } : {}) },
      api: { host: '127.0.0.1', port: 0 },
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
    const account = await seedAccount(config, { webhookUrl: receiver.url, webhookSecret: SECRET, senders: [{ name: 'Bench', type: 0 }] });
    // SMSGATE_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the gateway process.
    const nodeArgs = process.env['SMSGATE_GATEWAY_NODE_ARGS']?.split(' ').filter((a) => a !== '') ?? [];
    gateway = await GatewayProcess.spawn(path, { nodeArgs });
    const running = gateway;

    const body = JSON.stringify({
      text: options.text,
      from: 'Bench',
      recipientInfo: Array.from({ length: options.recipients }, (_, i) => ({ msisdn: options.msisdnFor(i), ClientReference: `b${i}` })),
    });
    const submits = new CounterClock(() => smsc.submitCount);
    const receipts = new CounterClock(() => smsc.receiptsAcknowledged);
    const webhooks = new CounterClock(() => receiver.acknowledged);
    let peakRssBytes = 0;
    const sampler = setInterval(() => {
      const now = performance.now();
      submits.sample(now);
      receipts.sample(now);
      webhooks.sample(now);
      try {
        peakRssBytes = Math.max(peakRssBytes, running.memory().peakRssBytes);
      } catch {
        // The process is gone; its last sample stands.
      }
    }, 20);

    const cpuAtStartMs = cpuMsOf(running.pid);
    const harnessCpuAtStart = process.cpuUsage();
    const startedAt = performance.now();
    const response = await fetch(`${running.baseUrl}/v1/campaign`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${account.token}` },
      body,
    });
    const acceptMs = performance.now() - startedAt;
    if (response.status !== 202) throw new Error(`POST /v1/campaign answered ${response.status}: ${await response.text()}`);
    const { id } = (await response.json()) as { id: string };

    // API latency while the campaign runs: one summary request every ~100 ms (a dashboard polling hard).
    const latenciesMs: number[] = [];
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const t = performance.now();
        const r = await fetch(`${running.baseUrl}/v1/campaign/${id}`, { headers: { authorization: `Bearer ${account.token}` } });
        await r.arrayBuffer();
        latenciesMs.push(performance.now() - t);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    const deadline = Date.now() + 30 * 60_000;
    // SMSGATE_BENCH_PROGRESS_MS sets how often a progress line goes to stderr.
    const progressEveryMs = Number(process.env['SMSGATE_BENCH_PROGRESS_MS'] ?? 5_000);
    let nextProgressAt = Date.now() + progressEveryMs;
    while (receiver.acknowledged < options.recipients) {
      if (Date.now() > deadline) throw new Error(`gave up: ${receiver.acknowledged} of ${options.recipients} webhooks`);
      if (Date.now() >= nextProgressAt) {
        nextProgressAt += progressEveryMs;
        const { rssBytes, peakRssBytes: peakSoFar } = running.memory();
        process.stderr.write(
          `  smsgate t=${((performance.now() - startedAt) / 1_000).toFixed(0)}s submits=${smsc.submitCount} receipts=${smsc.receiptsAcknowledged} webhooks=${receiver.acknowledged} rss=${(rssBytes / 1_048_576).toFixed(0)}MB peak=${(peakSoFar / 1_048_576).toFixed(0)}MB\n`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const finishedAt = performance.now();
    probing = false;
    await probe;
    clearInterval(sampler);
    for (const clock of [submits, receipts, webhooks]) clock.sample(finishedAt);
    peakRssBytes = Math.max(peakRssBytes, running.memory().peakRssBytes);
    const gatewayCpuMs = cpuMsOf(running.pid) - cpuAtStartMs;
    const harness = process.cpuUsage(harnessCpuAtStart);
    const exitCode = await running.stop();
    if (exitCode !== 0) notes.push(`smsgate serve exited ${exitCode} on SIGTERM`);
    if (receiver.signatureFailures > 0) notes.push(`${receiver.signatureFailures} webhook signatures failed`);
    const timeToLastWebhookMs = finishedAt - startedAt;
    return {
      label: 'smsgate',
      messages: options.recipients,
      submitsPerSecond: submits.perSecond(),
      receiptsPerSecond: receipts.perSecond(),
      webhooksPerSecond: webhooks.perSecond(),
      timeToLastWebhookMs,
      endToEndPerSecond: options.recipients / (timeToLastWebhookMs / 1_000),
      peakRssMb: peakRssBytes / 1_048_576,
      apiP50Ms: percentile(latenciesMs, 50),
      apiP99Ms: percentile(latenciesMs, 99),
      acceptMs,
      gatewayCpuMs,
      harnessCpuMs: (harness.user + harness.system) / 1_000,
      notes,
    };
  } finally {
    gateway?.kill('SIGKILL');
    await receiver.close();
    await smsc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
