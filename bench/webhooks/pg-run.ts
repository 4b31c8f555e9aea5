/**
 * Webhook sender throughput on PostgreSQL: one sender, as one cluster node
 * (PgWebhookOutbox: rows leased to the node, results written fenced), against a throwaway
 * PostgreSQL 15 started here and a local receiver that verifies every signature (in this process,
 * so the figure includes the receiver's work). Same shape as run.ts, the SQLite figure. Run:
 *   npm run bench:webhooks:pg -- [events] [concurrency]
 */
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { silentLogger } from '../../src/common/log.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { createPgStores } from '../../src/store/postgres/stores.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { PgWebhookOutbox, WebhookSender } from '../../src/webhooks/index.js';
import { startPostgres } from '../../test/support/postgres-server.js';
import { WebhookReceiver } from '../../test/support/webhook-receiver.js';

const INSERT_CHUNK_ROWS = 1_000;

async function main(): Promise<void> {
  const events = Number(process.argv[2] ?? 20_000);
  const concurrency = Number(process.argv[3] ?? 16);
  const server = await startPostgres();
  const receiver = await WebhookReceiver.start({ secret: 'bench-secret', keepRequests: false, keepBodies: false });
  try {
    const database = await openDatabase({ url: await server.createDatabase(), path: 'unused', synchronous: 'FULL', keyFile: 'unused' });
    if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
    const stores = createPgStores(database.pool);
    const box = SecretBox.fromKey(randomBytes(32));
    const clientId = await stores.auth.insertClient({ name: 'bench', webhookUrl: receiver.url, webhookSecretEnc: box.seal('bench-secret') }, Date.now());
    const enqueueStart = performance.now();
    for (let from = 0; from < events; from += INSERT_CHUNK_ROWS) {
      const count = Math.min(INSERT_CHUNK_ROWS, events - from);
      await stores.webhooks.insertOutboxRows(Array.from({ length: count }, (_, i) => ({
        clientId, recipientId: null, nowMs: Date.now(),
        body: JSON.stringify({ To: `35387${String(from + i).padStart(7, '0')}`, From: 'Bench', Status: 'DELIVRD', ClientReference: `ref-${from + i}` }),
      })));
    }
    const enqueueMs = performance.now() - enqueueStart;
    let peakRssBytes = process.memoryUsage().rss;
    const sampler = setInterval(() => { peakRssBytes = Math.max(peakRssBytes, process.memoryUsage().rss); }, 50);
    const sender = new WebhookSender({
      outbox: new PgWebhookOutbox(stores.webhooks, { nodeId: () => 'bench-node' }), secretBox: box, logger: silentLogger(), config: { concurrency },
    });
    const start = performance.now();
    sender.start();
    await receiver.waitUntil(() => receiver.acknowledged >= events, 600_000, `${events} acknowledgements`);
    const lastWebhookMs = performance.now() - start;
    await sender.whenIdle();
    const allWrittenMs = performance.now() - start;
    await sender.stop();
    clearInterval(sampler);
    const counts = await stores.webhooks.countOutboxByState();
    console.log(JSON.stringify({
      backend: 'postgresql', events, concurrency, enqueueMs: Math.round(enqueueMs),
      timeToLastWebhookMs: Math.round(lastWebhookMs), webhooksPerSecond: Math.round(events / lastWebhookMs * 1000),
      timeToAllResultsWrittenMs: Math.round(allWrittenMs),
      requests: receiver.count, signatureFailures: receiver.signatureFailures, deliveredRows: counts.delivered,
      fencedResults: sender.stats().fencedResults, peakRssMB: Math.round(peakRssBytes / 1e6),
    }));
    await database.close();
  } finally {
    await receiver.close();
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
