/**
 * A receiver outage on the spec's numbers (retries 2/4/8 s, breaker 30 s after two failures): events
 * are queued at a steady rate, the receiver answers 503 for a few seconds, then recovers. Prints how
 * many events became dead letters at the peak, how many are left dead at the end (0 with automatic
 * redrive), when the last one was delivered, and how many requests and duplicate
 * 2xx deliveries it took. Real time: about a minute. Run:
 *   npm run build && node dist/bench/webhooks/outage.js [eventsPerSecond] [blipMs] [queueForMs] [redriveWithinMs]
 * (redriveWithinMs 0: redrive off, as before ; the run then gives up 60 s after the last event).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { silentLogger } from '../../src/common/log.js';
import { openStore } from '../../src/store/sqlite/database.js';
import { SecretBox, defaultKeyFileFor } from '../../src/store/secret-box.js';
import { countOutboxByState } from '../../src/store/sqlite/webhook-store.js';
import { DEFAULT_WEBHOOK_CONFIG, enqueueDeliveryReceipt, WebhookSender } from '../../src/webhooks/index.js';
import { WebhookReceiver } from '../../test/support/webhook-receiver.js';

async function main(): Promise<void> {
  const eventsPerSecond = Number(process.argv[2] ?? 100);
  const blipMs = Number(process.argv[3] ?? 5_000);
  const queueForMs = Number(process.argv[4] ?? 15_000);
  const redriveWithinMs = Number(process.argv[5] ?? DEFAULT_WEBHOOK_CONFIG.redriveWithinMs);
  const blipStartMs = 3_000;
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-bench-outage-'));
  const dbPath = join(dir, 'gate.sqlite');
  const store = await openStore({ path: dbPath });
  const box = SecretBox.fromKeyFile(defaultKeyFileFor(dbPath));
  const start = performance.now();
  const elapsed = () => performance.now() - start;
  const acknowledgedIds = new Map<string, number>();
  const receiver = await WebhookReceiver.start({ secret: 'bench-secret', keepBodies: false, keepRequests: false });
  receiver.respondWith((request) => {
    if (elapsed() >= blipStartMs && elapsed() < blipStartMs + blipMs) return { kind: 'status', statusCode: 503 };
    const id = String(request.headers['x-event-id']);
    acknowledgedIds.set(id, (acknowledgedIds.get(id) ?? 0) + 1);
    return undefined;
  });
  const clientId = Number(store.db.prepare(`INSERT INTO clients (name, webhook_url, webhook_secret_enc, created_at) VALUES ('bench', ?, ?, 0)`)
    .run(receiver.url, box.seal('bench-secret')).lastInsertRowid);
  const sender = new WebhookSender({ store, secretBox: box, logger: silentLogger(), config: { ...DEFAULT_WEBHOOK_CONFIG, redriveWithinMs } });
  sender.start();

  let queued = 0;
  let peakDead = 0;
  let lastDeliveredAtMs = 0;
  const deadline = queueForMs + 60_000;
  while (elapsed() < deadline) {
    const due = Math.min(Math.floor((Math.min(elapsed(), queueForMs) / 1_000) * eventsPerSecond), Math.floor((queueForMs / 1_000) * eventsPerSecond));
    if (due > queued) {
      store.db.transaction(() => {
        for (; queued < due; queued++) {
          enqueueDeliveryReceipt(store.db, { clientId, recipientId: null, to: `3538${String(queued).padStart(8, '0')}`, from: 'Bench', status: 'DELIVRD', clientReference: null }, Date.now());
        }
      })();
      sender.wake();
    }
    const counts = countOutboxByState(store.db);
    peakDead = Math.max(peakDead, counts.dead);
    if (counts.delivered === queued && queued > 0 && elapsed() >= queueForMs) {
      lastDeliveredAtMs = elapsed();
      break;
    }
    await sleep(50);
  }
  await sender.stop();
  const counts = countOutboxByState(store.db);
  const duplicates = [...acknowledgedIds.values()].reduce((sum, n) => sum + n - 1, 0);
  console.log(JSON.stringify({
    eventsPerSecond, blipMs, redriveWithinMs, queued, peakDeadLetters: peakDead, deadAtEnd: counts.dead, pendingAtEnd: counts.pending,
    deliveredRows: counts.delivered, lastDeliveredAfterBlipEndMs: lastDeliveredAtMs === 0 ? null : Math.round(lastDeliveredAtMs - blipStartMs - blipMs),
    receiverRequests: receiver.count, duplicate2xx: duplicates, ...sender.stats(),
  }));
  await receiver.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

await main();
