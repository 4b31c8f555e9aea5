/**
 * bench:admin — what one /status or /status.json load and one /metrics scrape cost the gateway's
 * event loop (they read SQLite synchronously), with a campaign of 10,000 and 100,000 recipients in
 * progress on a real SQLite file. Prints a table of p50/max over 10 runs; asserts nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GatewayMetrics } from '../../src/admin/gateway-metrics.js';
import { RecentErrors } from '../../src/admin/recent-errors.js';
import { CampaignProgressCache, liveStatusFacts } from '../../src/admin/status-facts.js';
import { SimulatorTransport } from '../../src/transports/simulator/index.js';
import { renderStatusPage } from '../../src/admin/status-page.js';
import { TransportActivity } from '../../src/admin/transport-activity.js';
import { WebhookHealth } from '../../src/admin/webhook-health.js';
import { readiness } from '../../src/admin/readiness.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';

const RUNS = 10;

function seed(store: Store, recipients: number): void {
  const db = store.db;
  const nowMs = Date.now();
  db.prepare(`INSERT INTO clients (name, created_at) VALUES ('bench', ?)`).run(nowMs);
  const clientId = db.prepare(`SELECT id FROM clients WHERE name = 'bench'`).pluck().get() as number;
  db.prepare(
    `INSERT INTO campaigns (id, client_id, state, name, sender, text, total_sent, parts_per_message, created_at) VALUES ('c1', ?, 'ready', 'Bench', 'Bench', 'Hello', ?, 1, ?)`,
  ).run(clientId, recipients, nowMs);
  const addRecipient = db.prepare(`INSERT INTO recipients (id, campaign_id, msisdn, dispatch_state, status) VALUES (?, 'c1', ?, 'dispatched', ?)`);
  const addPart = db.prepare(
    `INSERT INTO message_parts (recipient_id, campaign_id, part_number, parts_total, concat_reference, transport, state, updated_at) VALUES (?, 'c1', 1, 1, 0, 'carrier', ?, ?)`,
  );
  db.transaction(() => {
    for (let i = 1; i <= recipients; i++) {
      // A third delivered, a third submitted, a third still queued.
      const third = i % 3;
      addRecipient.run(i, `3538${String(i).padStart(8, '0')}`, third === 0 ? 'delivered' : 'pending');
      addPart.run(i, third === 0 ? 'delivered' : third === 1 ? 'submitted' : 'queued', nowMs);
    }
  })();
}

async function timeAsync(body: () => Promise<unknown>): Promise<{ p50Ms: string; maxMs: string }> {
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await body();
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  return { p50Ms: ms[Math.floor(RUNS / 2)]!.toFixed(1), maxMs: ms[RUNS - 1]!.toFixed(1) };
}

const rows: Record<string, string | number>[] = [];
for (const recipients of [10_000, 100_000]) {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-bench-admin-'));
  const store = await openStore({ path: join(dir, 'bench.sqlite') });
  try {
    seed(store, recipients);
    const activity = new TransportActivity();
    // Not started: only its name matters here (its queue is counted).
    const transports = [new SimulatorTransport({ name: 'carrier', type: 'simulator' })];
    // ttl 0: every load counts, as the first load of each refresh interval does.
    const { status } = sqliteStorePorts(store);
    const sources = {
      status, transports, activity, recentErrors: new RecentErrors(), progress: new CampaignProgressCache(0), now: Date.now,
      webhookHealth: new WebhookHealth(), version: 'bench', startedAtMs: Date.now(), readiness: () => readiness(status, transports),
    };
    const metrics = new GatewayMetrics({ status, activity, transports: () => transports });
    const label = `${recipients.toLocaleString('en')} recipients in progress`;
    rows.push({ case: `${label}: /status.json facts`, ...(await timeAsync(() => liveStatusFacts(sources))) });
    rows.push({ case: `${label}: /status page (facts + HTML)`, ...(await timeAsync(async () => renderStatusPage(await liveStatusFacts(sources), { csrfToken: 'x' }))) });
    rows.push({ case: `${label}: /metrics scrape`, ...(await timeAsync(() => metrics.metrics())) });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
console.table(rows);
