/**
 * Webhook sender throughput: N receipts queued in one transaction, then sent to a local receiver that
 * verifies every signature (in this same process, so the figure includes the receiver's work).
 * Prints webhooks per second, time to the last acknowledgement and peak RSS. Run:
 *   npm run build && node dist/bench/webhooks/run.js [events] [concurrency]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { silentLogger } from '../../src/common/log.js';
import { openStore } from '../../src/store/sqlite/database.js';
import { SecretBox, defaultKeyFileFor } from '../../src/store/secret-box.js';
import { enqueueDeliveryReceipt, WebhookSender } from '../../src/webhooks/index.js';
import { WebhookReceiver } from '../../test/support/webhook-receiver.js';

async function main(): Promise<void> {
  const events = Number(process.argv[2] ?? 20_000);
  const concurrency = Number(process.argv[3] ?? 16);
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-bench-webhooks-'));
  const dbPath = join(dir, 'gate.sqlite');
  const store = await openStore({ path: dbPath });
  const box = SecretBox.fromKeyFile(defaultKeyFileFor(dbPath));
  const receiver = await WebhookReceiver.start({ secret: 'bench-secret', keepRequests: false, keepBodies: false });
  const clientId = Number(store.db.prepare(`INSERT INTO clients (name, webhook_url, webhook_secret_enc, created_at) VALUES ('bench', ?, ?, 0)`)
    .run(receiver.url, box.seal('bench-secret')).lastInsertRowid);
  const enqueueStart = performance.now();
  store.db.transaction(() => {
    for (let i = 0; i < events; i++) {
      enqueueDeliveryReceipt(store.db, {
        clientId, recipientId: null, to: `35387${String(i).padStart(7, '0')}`, from: 'Bench', status: 'DELIVRD', clientReference: `ref-${i}`,
      }, Date.now());
    }
  })();
  const enqueueMs = performance.now() - enqueueStart;
  let peakRssBytes = process.memoryUsage().rss;
  const sampler = setInterval(() => { peakRssBytes = Math.max(peakRssBytes, process.memoryUsage().rss); }, 50);
  const sender = new WebhookSender({ store, secretBox: box, logger: silentLogger(), config: { concurrency } });
  const start = performance.now();
  sender.start();
  await receiver.waitUntil(() => receiver.acknowledged >= events, 600_000, `${events} acknowledgements`);
  const lastWebhookMs = performance.now() - start;
  await sender.whenIdle();
  await sender.stop();
  clearInterval(sampler);
  const delivered = store.db.prepare(`SELECT COUNT(*) FROM webhook_outbox WHERE state = 'delivered'`).pluck().get() as number;
  console.log(JSON.stringify({
    events, concurrency, enqueueMs: Math.round(enqueueMs), enqueuedPerSecond: Math.round(events / enqueueMs * 1000),
    timeToLastWebhookMs: Math.round(lastWebhookMs), webhooksPerSecond: Math.round(events / lastWebhookMs * 1000),
    requests: receiver.count, signatureFailures: receiver.signatureFailures, deliveredRows: delivered,
    peakRssMB: Math.round(peakRssBytes / 1e6),
  }));
  await receiver.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
