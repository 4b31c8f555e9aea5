/**
 * `npm run bench:pg-engine`: the dispatch engine alone on PostgreSQL, one node, against
 * the same engine on SQLite in the same run. N recipients of one ready campaign (seeded by SQL)
 * go through the engine to a receipting test SMSC over SMPP on loopback (2 binds x window 100, no
 * rate cap) until every recipient is final: parts submitted, receipts applied, webhook outbox rows
 * written. Prints parts per second, this process's CPU per part and the commits; asserts nothing.
 *
 * The SMSC runs in this process (it shares the event loop: the figures compare the backends, they
 * are not the transport's ceiling, see bench:smpp). PostgreSQL is a throwaway server started here
 * with fsync=off (test/support/postgres-server.ts), SQLite is a file with synchronous=FULL as the
 * gateway runs it: the PostgreSQL figures leave out the disk's flush, the SQLite ones do not.
 *
 *   PG_ENGINE_BENCH_RECIPIENTS=5000 PG_ENGINE_BENCH_ROUNDS=2 npm run bench:pg-engine
 */
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGINE_DEFAULTS } from '../../src/engine/config.js';
import { DispatchEngine, type EngineStats } from '../../src/engine/dispatch-engine.js';
import type { EngineStore } from '../../src/engine/engine-backend.js';
import { silentLogger } from '../../src/common/log.js';
import { planMessage } from '../../src/sms/index.js';
import { openDatabase, openStore } from '../../src/store/sqlite/database.js';
import { SmppTransport } from '../../src/transports/smpp/index.js';
import { enqueueDeliveryReceipt, enqueueDeliveryReceipts } from '../../src/webhooks/index.js';
import { startPostgres } from '../../test/support/postgres-server.js';
import { TestSmsc } from '../../test/support/smsc/test-smsc.js';

const RECIPIENTS = Number(process.env['PG_ENGINE_BENCH_RECIPIENTS'] ?? 5_000);
const ROUNDS = Number(process.env['PG_ENGINE_BENCH_ROUNDS'] ?? 2);
const DEADLINE_MS = 600_000;

interface Backend {
  name: 'postgres' | 'sqlite';
  store: EngineStore;
  /** Seeds a client and a ready campaign of `count` recipients; returns the campaign id. */
  seed(count: number): Promise<string>;
  finalCount(campaignId: string): Promise<number>;
  close(): Promise<void>;
}

interface RunFigures {
  backend: string;
  seconds: number;
  partsPerSecond: number;
  cpuMicrosPerPart: number;
  stats: EngineStats;
}

function campaignRow(id: string, clientId: number, nowMs: number): unknown[] {
  const text = 'Bench message from the engine';
  const plan = planMessage(text);
  return [id, clientId, 'Acme', text, nowMs, plan.text, plan.encoding, plan.parts, RECIPIENTS];
}

async function postgresBackend(url: string): Promise<Backend> {
  const database = await openDatabase({ url, path: 'unused', synchronous: 'FULL', keyFile: 'unused' });
  if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
  const { pool } = database;
  return {
    name: 'postgres',
    store: { kind: 'postgres', pool, node: { nodeId: () => 'bench-node' } },
    async seed(count) {
      const nowMs = Date.now();
      const client = await pool.query<{ id: number }>(`INSERT INTO clients (name, active, webhook_url, created_at) VALUES ($1, 1, 'http://127.0.0.1:9/hook', $2) RETURNING id`,
        [`bench-${randomUUID()}`, nowMs]);
      const id = randomUUID();
      await pool.query(
        `INSERT INTO campaigns (id, client_id, state, name, sender, text, send_at, text_sent, encoding, parts_per_message, total_sent, skipped_count, created_at, ready_at)
         VALUES ($1, $2, 'ready', 'bench', $3, $4, $5, $6, $7, $8, $9, 0, $5, $5)`, campaignRow(id, client.rows[0]!.id, nowMs));
      await pool.query(`INSERT INTO recipients (campaign_id, msisdn) SELECT $1, '35387' || lpad(n::text, 7, '0') FROM generate_series(1, $2) AS n`, [id, count]);
      return id;
    },
    async finalCount(campaignId) {
      const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM recipients WHERE campaign_id = $1 AND status <> 'pending'`, [campaignId]);
      return rows[0]!.n;
    },
    close: () => database.close(),
  };
}

async function sqliteBackend(): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-bench-engine-'));
  const store = await openStore({ path: join(dir, 'smsgate.sqlite'), synchronous: 'FULL' });
  return {
    name: 'sqlite',
    store,
    async seed(count) {
      const nowMs = Date.now();
      const clientId = Number(store.db.prepare(`INSERT INTO clients (name, active, webhook_url, created_at) VALUES (?, 1, 'http://127.0.0.1:9/hook', ?)`)
        .run(`bench-${randomUUID()}`, nowMs).lastInsertRowid);
      const id = randomUUID();
      store.db.transaction(() => {
        store.db.prepare(
          `INSERT INTO campaigns (id, client_id, state, name, sender, text, send_at, text_sent, encoding, parts_per_message, total_sent, skipped_count, created_at, ready_at)
           VALUES (?, ?, 'ready', 'bench', ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`).run(...(campaignRow(id, clientId, nowMs) as (string | number)[]), nowMs, nowMs);
        const insert = store.db.prepare('INSERT INTO recipients (campaign_id, msisdn) VALUES (?, ?)');
        for (let i = 1; i <= count; i++) insert.run(id, `35387${String(i).padStart(7, '0')}`);
      })();
      return id;
    },
    async finalCount(campaignId) {
      return (store.db.prepare(`SELECT count(*) AS n FROM recipients WHERE campaign_id = ? AND status <> 'pending'`).get(campaignId) as { n: number }).n;
    },
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function runOnce(backend: Backend): Promise<RunFigures> {
  const smsc = await TestSmsc.start({ autoReceipt: { stat: 'DELIVRD' }, record: false });
  const transport = new SmppTransport({
    name: 'carrier', type: 'smpp', host: smsc.address.host, port: smsc.address.port, systemId: smsc.options.systemId, password: smsc.options.password,
    binds: 2, window: 100, maxPerSecond: 1_000_000, reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
  });
  const engine = new DispatchEngine({
    store: backend.store,
    transports: [transport],
    routes: [{ prefix: '', transport: 'carrier' }],
    config: { ...ENGINE_DEFAULTS },
    logger: silentLogger(),
    deliveryReceipts: { enqueue: enqueueDeliveryReceipt, enqueueMany: enqueueDeliveryReceipts, wake: () => {} },
  });
  try {
    const campaignId = await backend.seed(RECIPIENTS);
    await engine.start();
    const cpuBefore = process.cpuUsage();
    const startedMs = performance.now();
    engine.wake();
    const deadline = Date.now() + DEADLINE_MS;
    while ((await backend.finalCount(campaignId)) < RECIPIENTS) {
      if (Date.now() > deadline) throw new Error(`${backend.name}: not every recipient final within ${DEADLINE_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const seconds = (performance.now() - startedMs) / 1_000;
    const cpu = process.cpuUsage(cpuBefore);
    return {
      backend: backend.name, seconds, partsPerSecond: RECIPIENTS / seconds, cpuMicrosPerPart: (cpu.user + cpu.system) / RECIPIENTS, stats: engine.stats(),
    };
  } finally {
    await engine.stop();
    await smsc.stop();
  }
}

function row(f: RunFigures): string {
  const s = f.stats;
  return `| ${f.backend} | ${RECIPIENTS.toLocaleString('en')} | ${f.seconds.toFixed(2)} s | ${Math.round(f.partsPerSecond).toLocaleString('en')} | ${Math.round(f.cpuMicrosPerPart)} µs | `
    + `${s.commits.toLocaleString('en')} | ${s.failedCommits} | ${s.fencedWrites} | ${s.receiptsMatched} / ${s.receiptsParked} |`;
}

async function main(): Promise<void> {
  console.log(`bench:pg-engine: ${RECIPIENTS} one-part recipients per run, ${ROUNDS} round(s); ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}, load ${loadavg()[0]?.toFixed(1)}`);
  const server = await startPostgres();
  const figures: RunFigures[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of ['postgres', 'sqlite'] as const) {
        const backend = name === 'sqlite' ? await sqliteBackend() : await postgresBackend(await server.createDatabase());
        try {
          const f = await runOnce(backend);
          figures.push(f);
          console.log(`round ${round + 1} ${f.backend}: ${Math.round(f.partsPerSecond)} parts/s`);
        } finally {
          await backend.close();
        }
      }
    }
  } finally {
    await server.stop();
  }
  console.log('\n| backend | recipients | until all final | parts/s | CPU/part (this process, SMSC included) | commits | failed commits | fenced | receipts matched / parked |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const f of figures) console.log(row(f));
  console.log(`load average at end: ${loadavg()[0]?.toFixed(1)}`);
}

await main();
