/**
 * A dispatch engine over a real SQLite file in a temp dir, with accounts and ready campaigns
 * seeded by SQL (the campaign processor is tested on its own) and the real webhook outbox.
 *
 * Kept for the transport tests that drive a SQLite engine synchronously
 * (test/transports/smpp/unmarked-receipts.test.ts, test/transports/modem/sim-records.test.ts).
 * Engine scenarios use test/engine/conformance/engine-backends.ts, which runs each one on both
 * backends.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGINE_DEFAULTS, type EngineConfig } from '../../src/engine/config.js';
import { DispatchEngine } from '../../src/engine/dispatch-engine.js';
import type { RouteConfig } from '../../src/config/types.js';
import { silentLogger, type Logger } from '../../src/common/log.js';
import { planMessage } from '../../src/sms/index.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import type { MessagePartRow, RecipientRow, ReceiptRow, WebhookOutboxRow } from '../../src/store/entities.js';
import type { Transport } from '../../src/transports/transport.js';
import { enqueueDeliveryReceipt, enqueueDeliveryReceipts } from '../../src/webhooks/index.js';
import type { ManualClock } from '../support/manual-clock.js';

export interface HarnessOptions {
  transports: Transport[];
  routes?: RouteConfig[];
  engine?: Partial<EngineConfig>;
  /** The engine's loops sleep on this clock (default: real time); now() stays Date.now() + clockSkewMs. */
  clock?: ManualClock;
  /** The engine's logger (default: silent). */
  logger?: Logger;
}

export interface SeedCampaign {
  clientId: number;
  text?: string;
  sender?: string;
  msisdns: readonly string[];
  clientReferences?: readonly (string | null)[];
  sendAtMs?: number;
}

export interface EngineHarness {
  store: Store;
  engine: DispatchEngine;
  /** Added to Date.now() for the engine's clock (TTL tests move time forward). */
  clockSkewMs: number;
  webhookWakes: number;
  seedClient(webhookUrl?: string | null): number;
  seedCampaign(seed: SeedCampaign): string;
  recipients(campaignId: string): RecipientRow[];
  parts(campaignId: string): MessagePartRow[];
  receipts(): ReceiptRow[];
  outbox(): WebhookOutboxRow[];
  close(): Promise<void>;
}

export async function startEngineHarness(options: HarnessOptions): Promise<EngineHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-engine-'));
  const store = await openStore({ path: join(dir, 'smsgate.sqlite'), synchronous: 'NORMAL' });
  let clients = 0;
  const harness: EngineHarness = {
    store,
    engine: undefined as unknown as DispatchEngine,
    clockSkewMs: 0,
    webhookWakes: 0,
    seedClient(webhookUrl = 'http://127.0.0.1:9/hook') {
      clients++;
      return Number(
        store.db.prepare('INSERT INTO clients (name, active, webhook_url, created_at) VALUES (?, 1, ?, ?)').run(`client-${clients}`, webhookUrl, Date.now()).lastInsertRowid,
      );
    },
    seedCampaign(seed) {
      const id = randomUUID();
      const text = seed.text ?? 'Hello from the engine test';
      const plan = planMessage(text);
      const nowMs = Date.now();
      store.db.transaction(() => {
        store.db.prepare(
          `INSERT INTO campaigns (id, client_id, state, name, sender, text, send_at, text_sent, encoding, parts_per_message,
             total_sent, skipped_count, created_at, ready_at)
           VALUES (?, ?, 'ready', 'test', ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
        ).run(id, seed.clientId, seed.sender ?? 'Acme', text, seed.sendAtMs ?? nowMs, plan.text, plan.encoding, plan.parts, seed.msisdns.length, nowMs, nowMs);
        const insert = store.db.prepare('INSERT INTO recipients (campaign_id, msisdn, client_reference) VALUES (?, ?, ?)');
        seed.msisdns.forEach((msisdn, i) => insert.run(id, msisdn, seed.clientReferences?.[i] ?? null));
      })();
      harness.engine.wake();
      return id;
    },
    recipients: (campaignId) => store.db.prepare('SELECT * FROM recipients WHERE campaign_id = ? ORDER BY id').all(campaignId) as RecipientRow[],
    parts: (campaignId) => store.db.prepare('SELECT * FROM message_parts WHERE campaign_id = ? ORDER BY recipient_id, part_number').all(campaignId) as MessagePartRow[],
    receipts: () => store.db.prepare('SELECT * FROM receipts ORDER BY id').all() as ReceiptRow[],
    outbox: () => store.db.prepare('SELECT * FROM webhook_outbox ORDER BY id').all() as WebhookOutboxRow[],
    async close() {
      await harness.engine.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  harness.engine = new DispatchEngine({
    store,
    transports: options.transports,
    routes: options.routes ?? [{ prefix: '', transport: options.transports[0]?.name ?? 'sim' }],
    config: { ...ENGINE_DEFAULTS, pollIntervalMs: 20, retryBaseDelayMs: 10, retryMaxDelayMs: 100, drainTimeoutMs: 2_000, ...options.engine },
    logger: options.logger ?? silentLogger(),
    deliveryReceipts: {
      enqueue: enqueueDeliveryReceipt,
      enqueueMany: enqueueDeliveryReceipts,
      wake: () => {
        harness.webhookWakes++;
      },
    },
    now: () => Date.now() + harness.clockSkewMs,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  await harness.engine.start();
  // On a manual clock: the scheduler and every lane ran their first pass and sleep.
  const clock = options.clock;
  if (clock !== undefined) await waitFor(() => clock.pendingTimers(), (n) => n === options.transports.length + 2);
  return harness;
}

/** Polls until the check passes; fails with the last value after timeoutMs (never a timing assertion). */
export async function waitFor<T>(read: () => T, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value).slice(0, 2_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Steps a manual clock by `polls` poll intervals; after each step waits until every loop the step
 * woke has run its pass and gone back to sleep (its timer is set again). "Nothing happened after N
 * polls" is then a fact about N passes, not about how long the test slept.
 */
export async function stepPolls(clock: ManualClock, polls: number, pollIntervalMs: number): Promise<void> {
  for (let i = 0; i < polls; i++) {
    const sleepers = clock.pendingTimers();
    clock.advanceTo(clock.now() + pollIntervalMs);
    await waitFor(() => clock.pendingTimers(), (n) => n >= sleepers);
  }
}
