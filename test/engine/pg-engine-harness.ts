/**
 * The dispatch engine on a real PostgreSQL (usePostgresSuite: a throwaway server per file, a fresh
 * migrated database per test), with clients, ready campaigns and recipients seeded by SQL (the
 * campaign processor is tested on its own) and the real webhook outbox. Engines started here are
 * stopped after the test, also when it fails.
 */
import { randomUUID } from 'node:crypto';
import type { NodeIdSource } from '../../src/common/node-id.js';
import { ENGINE_DEFAULTS, type EngineConfig } from '../../src/engine/config.js';
import { DispatchEngine } from '../../src/engine/dispatch-engine.js';
import type { Route } from '../../src/engine/routing.js';
import { silentLogger, type Logger } from '../../src/common/log.js';
import { planMessage } from '../../src/sms/index.js';
import type { MessagePartRow, RecipientRow, ReceiptRow, WebhookOutboxRow } from '../../src/store/entities.js';
import { inTransaction, rows, type PgPool } from '../../src/store/postgres/pool.js';
import type { Transport } from '../../src/transports/transport.js';
import { isTransientStoreFailure } from '../../src/store/write-failures.js';
import type { PostgresSuite } from '../support/postgres-suite.js';

export interface PgEngineOptions {
  pool: PgPool;
  transports: Transport[];
  /** The node id its claims carry; null (the default) for a single gateway. */
  nodeId?: string | null;
  node?: NodeIdSource;
  routes?: Route[];
  engine?: Partial<EngineConfig>;
  logger?: Logger;
}

export interface PgEngine {
  engine: DispatchEngine;
  webhookWakes: number;
}

/** Starts an engine on the pool; stopped after the test (before the database closes). */
export async function startPgEngine(suite: PostgresSuite, options: PgEngineOptions): Promise<PgEngine> {
  const nodeId = options.nodeId ?? null;
  const started: PgEngine = { engine: undefined as unknown as DispatchEngine, webhookWakes: 0 };
  started.engine = new DispatchEngine({
    store: { kind: 'postgres', pool: options.pool, node: options.node ?? { nodeId: () => nodeId } },
    transports: options.transports,
    routes: options.routes ?? [{ prefix: '', transport: options.transports[0]?.name ?? 'sim' }],
    config: { ...ENGINE_DEFAULTS, pollIntervalMs: 20, retryBaseDelayMs: 10, retryMaxDelayMs: 100, drainTimeoutMs: 2_000, ...options.engine },
    logger: options.logger ?? silentLogger(),
    deliveryReceipts: {
      enqueue: () => {
        throw new Error('the PostgreSQL engine writes its outbox rows itself');
      },
      wake: () => {
        started.webhookWakes++;
      },
    },
    pgWriteRetry: { retryBaseDelayMs: 20, retryMaxDelayMs: 200 },
  });
  suite.afterThisTest(() => started.engine.stop());
  await started.engine.start();
  return started;
}

export async function seedClient(pool: PgPool, webhookUrl: string | null = 'http://127.0.0.1:9/hook'): Promise<number> {
  const [client] = await rows<{ id: number }>(pool, 'INSERT INTO clients (name, active, webhook_url, created_at) VALUES ($1, 1, $2, $3) RETURNING id',
    [`client-${randomUUID()}`, webhookUrl, Date.now()]);
  return client!.id;
}

export interface SeedCampaign {
  clientId: number;
  text?: string;
  sender?: string;
  msisdns: readonly string[];
  /** Default 'ready' (due now); another state keeps the engine from materialising it. */
  state?: 'ready' | 'queued';
}

/** A ready campaign due now with its recipients waiting, as the campaign processor leaves it. */
export async function seedCampaign(pool: PgPool, seed: SeedCampaign): Promise<string> {
  const id = randomUUID();
  const text = seed.text ?? 'Hello from the engine test';
  const plan = planMessage(text);
  const nowMs = Date.now();
  // One transaction: a ready campaign seen without its recipients would be marked dispatched at once.
  await inTransaction(pool, async (client) => {
    await client.query(
      `INSERT INTO campaigns (id, client_id, state, name, sender, text, send_at, text_sent, encoding, parts_per_message, total_sent, skipped_count, created_at, ready_at)
       VALUES ($1, $2, $10, 'test', $3, $4, $5, $6, $7, $8, $9, 0, $5, $5)`,
      [id, seed.clientId, seed.sender ?? 'Acme', text, nowMs, plan.text, plan.encoding, plan.parts, seed.msisdns.length, seed.state ?? 'ready']);
    await client.query(`INSERT INTO recipients (campaign_id, msisdn) SELECT $1, m FROM unnest($2::text[]) WITH ORDINALITY AS t(m, n) ORDER BY n`, [id, seed.msisdns]);
  });
  return id;
}

export const recipientsOf = (pool: PgPool, campaignId: string): Promise<RecipientRow[]> =>
  rows<RecipientRow>(pool, 'SELECT * FROM recipients WHERE campaign_id = $1 ORDER BY id', [campaignId]);

export const partsOf = (pool: PgPool, campaignId: string): Promise<(MessagePartRow & { claimed_by: string | null })[]> =>
  rows(pool, 'SELECT * FROM message_parts WHERE campaign_id = $1 ORDER BY recipient_id, part_number', [campaignId]);

export const receiptsIn = (pool: PgPool): Promise<ReceiptRow[]> => rows<ReceiptRow>(pool, 'SELECT * FROM receipts ORDER BY id');

export const outboxIn = (pool: PgPool): Promise<WebhookOutboxRow[]> => rows<WebhookOutboxRow>(pool, 'SELECT * FROM webhook_outbox ORDER BY id');

/**
 * Polls until the check passes; fails with the last value after timeoutMs (never a timing
 * assertion). A read the database refused for a passing reason (a test that kills connections
 * kills the test's own too) counts as not yet.
 */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await read();
      if (done(value)) return value;
      last = value;
    } catch (err) {
      if (!isTransientStoreFailure(err)) throw err;
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last).slice(0, 2_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const allFinal = (recipients: readonly RecipientRow[]): boolean => recipients.length > 0 && recipients.every((r) => r.status !== 'pending');

export function msisdns(count: number, prefix = '35387'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(7, '0')}`);
}
