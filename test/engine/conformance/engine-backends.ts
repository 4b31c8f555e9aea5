/**
 * The dispatch engine conformance harness: one rig, two backends. Every scenario declared with
 * describeEngineConformance runs once on a SQLite file and once on a real PostgreSQL 15 (one
 * throwaway server per test file, one migrated database per file, every table truncated between
 * scenarios), and sees the engine only through its public seam: a DispatchEngine built as the
 * composition root builds it (src/gateway-loops.ts), the stores' public methods to seed work, and
 * plain reads of the rows the engine leaves. A scenario cannot tell the backends apart except by
 * the answers, so an answer that differs is a drift between the two engines.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import type { CreditMovement } from '../../../src/accounts/credits.js';
import { silentLogger, type Logger } from '../../../src/common/log.js';
import { SINGLE_GATEWAY, type NodeIdSource } from '../../../src/common/node-id.js';
import { ENGINE_DEFAULTS, type EngineConfig } from '../../../src/engine/config.js';
import { DispatchEngine } from '../../../src/engine/dispatch-engine.js';
import type { EngineStore } from '../../../src/engine/engine-backend.js';
import type { RouteConfig } from '../../../src/config/types.js';
import { planMessage } from '../../../src/sms/index.js';
import type { MessagePartRow, RecipientRow, ReceiptRow, WebhookOutboxRow } from '../../../src/store/entities.js';
import { asyncPort, type Async } from '../../../src/store/ports.js';
import { applyCreditMovements } from '../../../src/store/postgres/credit-ledger.js';
import { inTransaction, type PgPool } from '../../../src/store/postgres/pool.js';
import { createPgStores } from '../../../src/store/postgres/stores.js';
import { openDatabase, openStore, type Database, type Store } from '../../../src/store/sqlite/database.js';
import { SqliteCreditLedger } from '../../../src/store/sqlite/credit-ledger.js';
import { DispatchStore } from '../../../src/store/sqlite/dispatch-store.js';
import { sqliteStorePorts, type StorePorts } from '../../../src/store/store-ports.js';
import { isTransientStoreFailure } from '../../../src/store/write-failures.js';
import type { Transport } from '../../../src/transports/transport.js';
import type { GatewayObserver } from '../../../src/gateway-observer.js';
import { enqueueDeliveryReceipt, enqueueDeliveryReceipts } from '../../../src/webhooks/index.js';
import type { ManualClock } from '../../support/manual-clock.js';
import { startPostgres, type PostgresServer } from '../../support/postgres-server.js';
import { untilConnectionsGone } from '../../support/postgres-suite.js';

export type EngineBackendName = 'sqlite' | 'postgres';

/** The harness's engine.pollIntervalMs. */
export const POLL_MS = 20;

/** The stores a scenario seeds work through (the same async ports on either backend). */
export type EngineStores = Omit<StorePorts, 'webhooks'> & { readonly dispatch: Async<DispatchStore> };

export interface EngineOptions {
  transports: Transport[];
  /** Default: everything to the first transport. */
  routes?: RouteConfig[];
  engine?: Partial<EngineConfig>;
  /** The engine's loops sleep on this clock (default: real time); now() stays Date.now() + clockSkewMs. */
  clock?: ManualClock;
  logger?: Logger;
  /** Metrics hooks (default: none). */
  observer?: GatewayObserver;
}

export interface SeedCampaign {
  clientId: number;
  text?: string;
  sender?: string;
  msisdns: readonly string[];
  clientReferences?: readonly (string | null)[];
  /** Default: now (due at once). */
  sendAtMs?: number;
  /** Wake the engine once seeded (default true). */
  wake?: boolean;
  /** Default true; false leaves the campaign being processed (its recipients written, not ready), which no engine sends. */
  ready?: boolean;
  /**
   * Prices every recipient's parts at this (recipients.credits_per_part) and reserves the
   * campaign's most it can cost (recipients x parts x price) through the ledger writer before the
   * campaign is ready, as accepting and processing a priced campaign leaves it. Default: unpriced.
   */
  creditsPerPart?: number;
}

/** One row of inbound_messages as a scenario compares it. */
export interface InboundRow {
  transport: string;
  sender: string;
  recipient: string;
  text: string;
  raw: string | null;
  received_at: number;
  client_id: number | null;
  incomplete: number;
}

export interface EngineRig {
  readonly backend: EngineBackendName;
  /** PostgreSQL's parts carry the claimant node id (claimed_by); SQLite has no nodes. */
  readonly hasNodes: boolean;
  readonly stores: EngineStores;
  /** The engine started last (startEngine); stopped after the test, also when it fails. */
  readonly engine: DispatchEngine;
  /** Added to Date.now() for every engine's clock (TTL and send-time scenarios move time forward). */
  clockSkewMs: number;
  /** Calls of the engine's webhook wake-up (the outbox sender's). */
  readonly webhookWakes: number;
  /**
   * Starts a DispatchEngine on this database (a restart is a second call: the first engine,
   * stopped or not, stays as it is); resolves once it started, on a manual clock once the
   * scheduler and every lane ran their first pass and sleep.
   */
  startEngine(options: EngineOptions): Promise<DispatchEngine>;
  seedClient(webhookUrl?: string | null): Promise<number>;
  /** A ready campaign due at sendAtMs with its recipients waiting, as the campaign processor leaves it; wakes the engine. */
  seedCampaign(seed: SeedCampaign): Promise<string>;
  recipients(campaignId: string): Promise<RecipientRow[]>;
  parts(campaignId: string): Promise<(MessagePartRow & { claimed_by?: string | null })[]>;
  receipts(): Promise<ReceiptRow[]>;
  outbox(): Promise<WebhookOutboxRow[]>;
  inbound(): Promise<InboundRow[]>;
  undecodablePdus(): Promise<{ transport: string; device: string; hex: string; reason_code: string }[]>;
  campaign(campaignId: string): Promise<{ state: string; dispatched_at: number | null } | undefined>;
  /** Writes credit movements through the backend's ledger writer, in one transaction (a top-up, a reservation). */
  applyCredits(movements: readonly CreditMovement[]): Promise<void>;
  /**
   * A read or a write the stores have no method for (what a kill -9 leaves behind). `?`
   * placeholders, the same text on both backends.
   */
  sql<T>(text: string, params?: readonly unknown[]): Promise<T[]>;
}

/** What each backend gives the rig: the engine's store, the ports, and SQL. */
interface Connection {
  readonly engineStore: EngineStore;
  readonly stores: EngineStores;
  sql<T>(text: string, params: readonly unknown[]): Promise<T[]>;
  applyCredits(movements: readonly CreditMovement[]): Promise<void>;
}

function sqliteConnection(store: Store): Connection {
  return {
    engineStore: store,
    stores: { ...sqliteStorePorts({ db: store.db }), dispatch: asyncPort(new DispatchStore(store.db)) },
    sql: async <T>(text: string, params: readonly unknown[]) => {
      const statement = store.db.prepare(text);
      if (statement.reader) return statement.all(...params) as T[];
      statement.run(...params);
      return [];
    },
    applyCredits: async (movements) => {
      const ledger = new SqliteCreditLedger(store.db);
      store.db.transaction(() => ledger.apply(movements, Date.now()))();
    },
  };
}

/** `?` -> `$1`, `$2`, ...: one SQL text for both backends (no scenario puts a `?` in a literal). */
function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

function postgresConnection(pool: PgPool, node: NodeIdSource = SINGLE_GATEWAY): Connection {
  const pgStores = createPgStores(pool);
  return {
    engineStore: { kind: 'postgres', pool, node },
    stores: pgStores,
    sql: async <T>(text: string, params: readonly unknown[]) => (await pool.query(numbered(text), [...params])).rows as T[],
    applyCredits: (movements) => inTransaction(pool, (client) => applyCreditMovements(client, movements, Date.now())),
  };
}

function makeRig(backend: EngineBackendName, connection: Connection, afterThisTest: (close: () => Promise<void>) => void): EngineRig {
  const { stores, sql } = connection;
  let current: DispatchEngine | undefined;
  let clients = 0;
  let wakes = 0;
  const rig: EngineRig = {
    backend,
    hasNodes: backend === 'postgres',
    stores,
    get engine(): DispatchEngine {
      if (current === undefined) throw new Error('no engine started: call startEngine first');
      return current;
    },
    clockSkewMs: 0,
    get webhookWakes() {
      return wakes;
    },
    async startEngine(options) {
      const engine = new DispatchEngine({
        store: connection.engineStore,
        transports: options.transports,
        routes: options.routes ?? [{ prefix: '', transport: options.transports[0]?.name ?? 'sim' }],
        config: { ...ENGINE_DEFAULTS, pollIntervalMs: POLL_MS, retryBaseDelayMs: 10, retryMaxDelayMs: 100, drainTimeoutMs: 2_000, ...options.engine },
        logger: options.logger ?? silentLogger(),
        // As the composition root wires it: on PostgreSQL the engine writes its outbox rows itself.
        deliveryReceipts: {
          enqueue: enqueueDeliveryReceipt,
          enqueueMany: enqueueDeliveryReceipts,
          wake: () => {
            wakes++;
          },
        },
        now: () => Date.now() + rig.clockSkewMs,
        ...(options.clock === undefined ? {} : { clock: options.clock }),
        ...(options.observer === undefined ? {} : { observer: options.observer }),
        ...(backend === 'postgres' ? { pgWriteRetry: { retryBaseDelayMs: 20, retryMaxDelayMs: 200 } } : {}),
      });
      afterThisTest(() => engine.stop());
      current = engine;
      await engine.start();
      const clock = options.clock;
      if (clock !== undefined) await until(async () => clock.pendingTimers(), (n) => n === options.transports.length + 2);
      return engine;
    },
    async seedClient(webhookUrl = 'http://127.0.0.1:9/hook') {
      clients++;
      // Unique across rigs on one database (two nodes).
      return stores.auth.insertClient({ name: `client-${clients}-${randomUUID().slice(0, 8)}`, webhookUrl, webhookSecretEnc: null }, Date.now());
    },
    async seedCampaign(seed) {
      const campaignId = randomUUID();
      const text = seed.text ?? 'Hello from the engine test';
      const plan = planMessage(text);
      const nowMs = Date.now();
      const userId = await stores.auth.insertUser({ clientId: seed.clientId, username: `${campaignId}-user`, passwordHash: 'hash', isAdmin: false }, nowMs);
      await stores.campaigns.insertCampaign({
        id: campaignId, clientId: seed.clientId, userId, state: 'queued', name: 'test', sender: seed.sender ?? 'Acme', text, sendAtLocal: null,
        createAsDraft: false, shouldSaveList: false, requestRecipientsJson: '[]', createdAtMs: nowMs,
      });
      await stores.campaigns.claimForProcessing(campaignId);
      await stores.campaigns.appendRecipients(campaignId, seed.msisdns.map((msisdn, i) => ({ msisdn, clientReference: seed.clientReferences?.[i] ?? null })), nowMs);
      if (seed.creditsPerPart !== undefined) {
        const credits = seed.msisdns.length * plan.parts * seed.creditsPerPart;
        await sql('UPDATE recipients SET credits_per_part = ? WHERE campaign_id = ?', [seed.creditsPerPart, campaignId]);
        await sql('UPDATE campaigns SET credits_reserved = ? WHERE id = ?', [credits, campaignId]);
        await connection.applyCredits([{ clientId: seed.clientId, kind: 'reserve', credits, campaignId, note: null }]);
      }
      if (seed.ready === false) return campaignId;
      // Ready last: a ready campaign seen without its recipients would be marked dispatched at once.
      await stores.campaigns.markReady({
        campaignId, totalSent: seed.msisdns.length, textSent: plan.text, encoding: plan.encoding, partsPerMessage: plan.parts,
        sendAtMs: seed.sendAtMs ?? nowMs, skippedCount: 0, readyAtMs: nowMs,
      });
      if (seed.wake !== false) current?.wake();
      return campaignId;
    },
    recipients: (campaignId) => sql('SELECT * FROM recipients WHERE campaign_id = ? ORDER BY id', [campaignId]),
    parts: (campaignId) => sql('SELECT * FROM message_parts WHERE campaign_id = ? ORDER BY recipient_id, part_number', [campaignId]),
    receipts: () => sql('SELECT * FROM receipts ORDER BY id', []),
    outbox: () => sql('SELECT * FROM webhook_outbox ORDER BY id', []),
    inbound: () => sql('SELECT transport, sender, recipient, text, raw, received_at, client_id, incomplete FROM inbound_messages ORDER BY id', []),
    undecodablePdus: () => sql('SELECT transport, device, hex, reason_code FROM undecodable_pdus ORDER BY id', []),
    applyCredits: (movements) => connection.applyCredits(movements),
    campaign: async (campaignId) => (await sql<{ state: string; dispatched_at: number | null }>('SELECT state, dispatched_at FROM campaigns WHERE id = ?', [campaignId]))[0],
    sql: (text, params = []) => sql(text, params),
  };
  return rig;
}

/**
 * The rig on a PostgreSQL pool for the scenarios only a backend with nodes has (test/engine/postgres):
 * its engines stamp their claims with `node`'s id; `afterThisTest` stops them (usePostgresSuite's).
 */
export function postgresEngineRig(pool: PgPool, afterThisTest: (close: () => Promise<void>) => void, node?: NodeIdSource): EngineRig {
  return makeRig('postgres', postgresConnection(pool, node), afterThisTest);
}

/** Everything a PostgreSQL scenario may have written, emptied between scenarios (the migrations' own table kept). */
async function truncateAll(pool: PgPool): Promise<void> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename NOT IN ('migrations', 'typeorm_metadata')`);
  if (rows.length > 0) await pool.query(`TRUNCATE ${rows.map((r) => r.name).join(', ')} RESTART IDENTITY CASCADE`);
}

/**
 * Declares `describe(name)` once per backend; each test calls `open()` for an empty database on
 * it (SQLite: a fresh file; PostgreSQL: the file's database, truncated after the previous test).
 * Engines started on it are stopped after the test, before the database is emptied or closed.
 */
export function describeEngineConformance(name: string, body: (open: () => Promise<EngineRig>) => void): void {
  describe.each<EngineBackendName>(['sqlite', 'postgres'])(`${name} (%s)`, (backend) => {
    let server: PostgresServer | undefined;
    let database: Extract<Database, { kind: 'postgres' }> | undefined;
    let dir: string | undefined;
    let files = 0;
    const closers: (() => Promise<void>)[] = [];

    beforeAll(async () => {
      if (backend === 'sqlite') {
        dir = mkdtempSync(join(tmpdir(), 'smsgate-engine-conformance-'));
        return;
      }
      server = await startPostgres();
      const opened = await openDatabase({ url: await server.createDatabase(), path: 'unused', synchronous: 'FULL', keyFile: 'unused' });
      if (opened.kind !== 'postgres') throw new Error('expected PostgreSQL');
      database = opened;
    }, 60_000);
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
      if (database !== undefined) await truncateAll(database.pool);
    });
    afterAll(async () => {
      await database?.close();
      if (server !== undefined) {
        await untilConnectionsGone(server);
        await server.stop();
      }
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    body(async (): Promise<EngineRig> => {
      const afterThisTest = (close: () => Promise<void>): void => void closers.push(close);
      if (backend === 'postgres') return makeRig('postgres', postgresConnection((database as NonNullable<typeof database>).pool), afterThisTest);
      files += 1;
      const store = await openStore({ path: join(dir as string, `engine-${files}.sqlite`), synchronous: 'NORMAL' });
      closers.push(() => store.close());
      return makeRig('sqlite', sqliteConnection(store), afterThisTest);
    });
  });
}

/**
 * Polls until the check passes; fails with the last value after timeoutMs (never a timing
 * assertion). A read the database refused for a passing reason counts as not yet.
 */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
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
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Steps a manual clock by `polls` poll intervals; after each step waits until every loop the step
 * woke has run its pass and gone back to sleep (its timer is set again). "Nothing happened after N
 * polls" is then a fact about N passes, not about how long the test slept.
 */
export async function stepPolls(clock: ManualClock, polls: number, pollIntervalMs = POLL_MS): Promise<void> {
  for (let i = 0; i < polls; i++) {
    const sleepers = clock.pendingTimers();
    clock.advanceTo(clock.now() + pollIntervalMs);
    await until(async () => clock.pendingTimers(), (n) => n >= sleepers);
  }
}

export const allFinal = (rows: readonly { status: string }[]): boolean => rows.length > 0 && rows.every((r) => r.status !== 'pending');

export function msisdns(count: number, prefix = '35387'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(7, '0')}`);
}

/** The Status of each webhook row, grouped by recipient id. */
export function webhookStatuses(outbox: readonly { recipient_id: number | null; body: string }[]): Map<number, string[]> {
  const byRecipient = new Map<number, string[]>();
  for (const row of outbox) {
    const status = (JSON.parse(row.body) as { Status: string }).Status;
    byRecipient.set(row.recipient_id as number, [...(byRecipient.get(row.recipient_id as number) ?? []), status]);
  }
  return byRecipient;
}
