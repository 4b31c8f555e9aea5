/**
 * The embeddable gateway: `createGateway(config)` wires the store (migrations applied), auth, the
 * campaign API and its background processor, the dispatch engine with its transports, and the
 * webhook sender into one object that starts and stops as a unit. `smsgate serve` is this plus
 * signal handling. The pure core is exported beside it for programs that embed only that.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { createAdminListener, type AdminListener } from './admin/admin-listener.js';
import { createApiApp } from './api/app.js';
import { AuthService } from './auth/index.js';
import { CampaignProcessor, CampaignService } from './campaigns/index.js';
import type { SmsGateConfig } from './gateway-config.js';
import { resolveEngineConfig, type EngineConfig } from './engine/config.js';
import { DispatchEngine } from './engine/dispatch-engine.js';
import { createTransports } from './engine/transport-factory.js';
import { silentLogger, type Logger } from './log.js';
import { numberingPlanFor } from './sms/numbering.js';
import { GatewayError } from './errors.js';
import { joinPgCluster } from './cluster/pg-cluster.js';
import type { ClusterRuntime } from './cluster/cluster-runtime.js';
import { serveKeyFileProblem } from './config/database.js';
import { openDatabase, openStore, type Store } from './store/database.js';
import { createPgStores } from './store/pg/stores.js';
import { PgWebhookStore } from './store/pg/webhook-store.js';
import { defaultKeyFileFor, SecretBox } from './store/secret-box.js';
import { ServeLock } from './store/serve-lock.js';
import { sqliteStorePorts, type ServeGuard, type StorePorts } from './store/store-ports.js';
import { InboundService } from './inbound/inbound-service.js';
import type { Transport } from './transports/transport.js';
import { enqueueDeliveryReceipt, enqueueDeliveryReceipts, PgWebhookOutbox, WebhookSender } from './webhooks/index.js';
import { WebhookSenderThread } from './webhooks/sender-thread.js';

export interface GatewayOptions {
  logger?: Logger;
  /** Transports to use instead of building them from config.transports (tests, embedding). Names must match the routes. */
  transports?: Transport[];
  /** Clock for the engine and the background workers; defaults to Date.now. */
  now?: () => number;
}

export interface Gateway {
  readonly app: Koa;
  /**
   * The SQLite store of a single gateway (database.path). A node on PostgreSQL has none: reading it
   * there throws BACKEND_UNSUPPORTED (use `ports`, or `cluster` for the node's runtime).
   */
  readonly store: Store;
  /** The node's cluster runtime when database.url selects PostgreSQL (issue 11); undefined on SQLite. */
  readonly cluster: ClusterRuntime | undefined;
  /** The async store ports everything outside the engine and the webhook sender uses (issue 11). */
  readonly ports: StorePorts;
  readonly engine: DispatchEngine;
  readonly campaigns: CampaignService;
  readonly auth: AuthService;
  readonly transports: readonly Transport[];
  /** The admin listener (metrics, status page, readiness) when config.admin is set. */
  readonly admin: AdminListener | undefined;
  /** Starts the background workers and the transports, then listens on api.host:api.port (port 0 picks one). */
  start(): Promise<void>;
  /** Stops listening, drains the engine (bounded by engine.drainTimeoutMs), stops transports and workers, closes the store. */
  stop(): Promise<void>;
  /** Where the API listens once started. */
  address(): { host: string; port: number } | undefined;
}

/**
 * Builds a gateway. Async because opening the store applies pending migrations and auth loads (or
 * makes) its signing key; nothing listens and nothing is sent until start().
 */
export async function createGateway(config: SmsGateConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? silentLogger();
  const now = options.now ?? Date.now;
  const engineConfig: EngineConfig = resolveEngineConfig(config.engine);
  // Issue 11: database.url makes this gateway a node of a cluster on PostgreSQL.
  if (config.database.url !== undefined) return createClusterNode(config, options, { logger, now, engineConfig });
  // One gateway per SQLite file (README "serve"): refused at once, before the database is touched.
  const lock: ServeGuard = ServeLock.acquire(config.database.path, now);
  let store: Store;
  try {
    store = await openStore({ path: config.database.path, synchronous: config.database.synchronous });
  } catch (err) {
    lock.release();
    throw err;
  }
  try {
    const secretBox = SecretBox.fromKeyFile(config.database.keyFile ?? defaultKeyFileFor(config.database.path));
    // The one place the backend's ports are chosen (issue 11 item 1).
    const ports = sqliteStorePorts(store);
    // Issue 13: metrics and the status page's recent errors see the engine, transports and webhooks.
    const admin = config.admin === undefined ? undefined : createAdminListener({ config: config.admin, ports, logger: logger.child({ part: 'admin' }), now });
    const observed = admin?.tapLogger(logger) ?? logger;
    const auth = await AuthService.create(ports.auth, config.auth, secretBox, { now, logger: logger.child({ part: 'auth' }) });
    // Issue 12: the sender runs on its own thread (the second core) when built; an injected clock
    // (tests) or the TypeScript sources keep it in this thread.
    const webhooks: WebhookSender | WebhookSenderThread =
      options.now === undefined && WebhookSenderThread.available()
        ? new WebhookSenderThread({
            db: store.db,
            databasePath: config.database.path,
            busyTimeoutMs: 5_000,
            keyFile: config.database.keyFile ?? defaultKeyFileFor(config.database.path),
            config: config.webhooks,
            logLevel: observed.level,
            logger: observed.child({ part: 'webhooks' }),
            ...(admin === undefined ? {} : { observer: admin.observer }),
          })
        : new WebhookSender({
            store,
            secretBox,
            logger: observed.child({ part: 'webhooks' }),
            config: config.webhooks,
            now,
            ...(admin === undefined ? {} : { observer: admin.observer }),
          });
    const transports = options.transports ?? (await createTransports(config.transports, observed));
    const inbound = new InboundService({
      store: ports.inbound,
      logger: observed.child({ part: 'engine' }).child({ part: 'inbound' }),
      now,
      wakeWebhooks: () => webhooks.wake(),
      numbering: numberingPlanFor(config.numbering.country),
    });
    const engine = new DispatchEngine({
      store,
      transports,
      routes: config.routes,
      config: engineConfig,
      logger: observed.child({ part: 'engine' }),
      deliveryReceipts: { enqueue: enqueueDeliveryReceipt, enqueueMany: enqueueDeliveryReceipts, wake: () => webhooks.wake() },
      now,
      numbering: numberingPlanFor(config.numbering.country),
      inbound,
      ...(admin === undefined ? {} : { observer: admin.observer }),
    });
    admin?.attach({ transports, wakeWebhooks: () => webhooks.wake(), writesStalled: () => engine.stats().writesStalled });
    const processor = new CampaignProcessor({
      store: ports,
      logger,
      now,
      pollIntervalMs: config.processing.pollIntervalMs,
      onReady: () => engine.wake(),
      numbering: numberingPlanFor(config.numbering.country),
      timeZone: config.scheduling.timeZone,
    });
    const campaigns = new CampaignService({ store: ports, logger, now, onQueued: () => processor.wake() });
    const app = createApiApp({ ports, auth, campaigns, config, logger: logger.child({ part: 'api' }), ...(admin === undefined ? {} : { observer: admin.observer }) });
    const backend: GatewayBackend = {
      store,
      cluster: undefined,
      start: () => Promise.resolve(),
      engineStarted: () => undefined,
      engineStopping: () => Promise.resolve(),
      async close() {
        await store.close();
        lock.release();
      },
    };
    return new RunningGateway({ app, backend, ports, engine, campaigns, auth, transports, processor, webhooks, config, logger, engineConfig, admin });
  } catch (err) {
    await store.close();
    lock.release();
    throw err;
  }
}

/**
 * A node of a cluster on PostgreSQL (issue 11): the same API, processor, engine and sender as a
 * single gateway, on the PostgreSQL stores, with the node's cluster runtime (membership, takeover,
 * bind slots, wake-ups: src/cluster). No ServeLock: every `serve` on the database is a node.
 */
async function createClusterNode(
  config: SmsGateConfig,
  options: GatewayOptions,
  { logger, now, engineConfig }: { logger: Logger; now: () => number; engineConfig: EngineConfig },
): Promise<Gateway> {
  const keyFileProblem = serveKeyFileProblem(config.database);
  if (keyFileProblem !== null) throw keyFileProblem;
  const database = await openDatabase(config.database);
  if (database.kind !== 'postgres') throw new GatewayError('BACKEND_UNSUPPORTED', 'database.url: expected a PostgreSQL database');
  let cluster: ClusterRuntime | undefined;
  try {
    const url = config.database.url as string;
    const secretBox = SecretBox.fromKeyFile(config.database.keyFile);
    const ports: StorePorts = createPgStores(database.pool);
    await checkSharedKey(ports, secretBox, config.database.keyFile, database.describe);
    const admin = config.admin === undefined ? undefined : createAdminListener({ config: config.admin, ports, logger: logger.child({ part: 'admin' }), now });
    const observed = admin?.tapLogger(logger) ?? logger;
    // The loops exist only after the runtime (they take its node id and slot gate); its wake-ups reach them once built.
    const loops: { engine?: DispatchEngine; webhooks?: WebhookSender; processor?: CampaignProcessor } = {};
    cluster = await joinPgCluster({
      pool: database.pool,
      url,
      apiPort: config.api.port === 0 ? null : config.api.port,
      logger: observed,
      wake: { parts: () => loops.engine?.wake(), outbox: () => loops.webhooks?.wake(), campaigns: () => loops.processor?.wake() },
    });
    const node = cluster.node;
    const auth = await AuthService.create(ports.auth, config.auth, secretBox, { now, logger: logger.child({ part: 'auth' }) });
    const webhooks = new WebhookSender({
      outbox: new PgWebhookOutbox(new PgWebhookStore(database.pool), node),
      secretBox,
      logger: observed.child({ part: 'webhooks' }),
      config: config.webhooks,
      now,
      ...(admin === undefined ? {} : { observer: admin.observer }),
    });
    loops.webhooks = webhooks;
    const transports = options.transports ?? (await createTransports(config.transports, observed, { slotGate: cluster.slotGate }));
    const inbound = new InboundService({
      store: ports.inbound,
      logger: observed.child({ part: 'engine' }).child({ part: 'inbound' }),
      now,
      wakeWebhooks: () => webhooks.wake(),
      numbering: numberingPlanFor(config.numbering.country),
    });
    const engine = new DispatchEngine({
      store: { kind: 'postgres', pool: database.pool, node },
      transports,
      routes: config.routes,
      config: engineConfig,
      logger: observed.child({ part: 'engine' }),
      deliveryReceipts: { enqueue: enqueueDeliveryReceipt, enqueueMany: enqueueDeliveryReceipts, wake: () => webhooks.wake() },
      now,
      numbering: numberingPlanFor(config.numbering.country),
      inbound,
      ...(admin === undefined ? {} : { observer: admin.observer }),
    });
    loops.engine = engine;
    admin?.attach({ transports, wakeWebhooks: () => webhooks.wake(), writesStalled: () => engine.stats().writesStalled, cluster });
    const processor = new CampaignProcessor({
      store: ports,
      logger,
      now,
      pollIntervalMs: config.processing.pollIntervalMs,
      onReady: () => engine.wake(),
      numbering: numberingPlanFor(config.numbering.country),
      timeZone: config.scheduling.timeZone,
      node,
    });
    loops.processor = processor;
    const campaigns = new CampaignService({ store: ports, logger, now, onQueued: () => processor.wake() });
    const app = createApiApp({ ports, auth, campaigns, config, logger: logger.child({ part: 'api' }), ...(admin === undefined ? {} : { observer: admin.observer }) });
    const runtime = cluster;
    const backend: GatewayBackend = {
      get store(): Store {
        throw new GatewayError('BACKEND_UNSUPPORTED', `gateway.store: this node runs on PostgreSQL (${database.describe}); use gateway.ports`);
      },
      cluster: runtime,
      start: () => runtime.start(),
      engineStarted: (started) => runtime.beginSlotSync(started),
      engineStopping: () => runtime.endSlotSync(),
      async close() {
        // After the engine drained (it requeued its own claims) and the sender stopped.
        await runtime.stop();
        await database.close();
      },
    };
    return new RunningGateway({ app, backend, ports, engine, campaigns, auth, transports, processor, webhooks, config, logger, engineConfig, admin });
  } catch (err) {
    await cluster?.stop().catch(() => undefined);
    await database.close();
    throw err;
  }
}

/**
 * Every node must hold the key the cluster's secrets were sealed with (README "Running a
 * cluster"): a node started with another key file would create one of its own and then fail to
 * open webhook secrets and signing keys written by the others. Refused at start, naming the file.
 */
async function checkSharedKey(ports: StorePorts, secretBox: SecretBox, keyFile: string, databaseName: string): Promise<void> {
  const sealed = (await ports.auth.signingKeys()).find((key) => key.retired_at === null);
  if (sealed === undefined) return;
  try {
    secretBox.open(sealed.private_jwk_enc);
  } catch (cause) {
    throw new GatewayError(
      'SECRET_KEY_INVALID',
      `database.keyFile: ${keyFile} does not open the secrets stored in ${databaseName}: every node of a cluster must use the same key file (copy it from a node that served this database)`,
      { cause },
    );
  }
}

/**
 * What differs between a single gateway on its SQLite file and a node of a cluster on PostgreSQL,
 * around the loops both run. Called in this order by RunningGateway.
 */
interface GatewayBackend {
  readonly store: Store;
  readonly cluster: ClusterRuntime | undefined;
  /** Before the engine starts: a node joins the cluster and opens its bind slot session. */
  start(): Promise<void>;
  /** After the engine started its transports (their first slot sync is done). */
  engineStarted(transports: readonly Transport[]): void;
  /** Before the engine stops its transports: no slot sync may run beside their stop. */
  engineStopping(): Promise<void>;
  /** After every loop stopped: leave the cluster, close the database, release the serve lock. */
  close(): Promise<void>;
}

interface GatewayParts {
  app: Koa;
  backend: GatewayBackend;
  ports: StorePorts;
  engine: DispatchEngine;
  campaigns: CampaignService;
  auth: AuthService;
  transports: readonly Transport[];
  processor: CampaignProcessor;
  webhooks: WebhookSender | WebhookSenderThread;
  config: SmsGateConfig;
  logger: Logger;
  engineConfig: EngineConfig;
  admin: AdminListener | undefined;
}

class RunningGateway implements Gateway {
  readonly app: Koa;
  readonly ports: StorePorts;
  readonly engine: DispatchEngine;
  readonly campaigns: CampaignService;
  readonly auth: AuthService;
  readonly transports: readonly Transport[];
  readonly admin: AdminListener | undefined;
  private server: Server | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly parts: GatewayParts) {
    this.app = parts.app;
    this.ports = parts.ports;
    this.engine = parts.engine;
    this.campaigns = parts.campaigns;
    this.auth = parts.auth;
    this.transports = parts.transports;
    this.admin = parts.admin;
  }

  get store(): Store {
    return this.parts.backend.store;
  }

  get cluster(): ClusterRuntime | undefined {
    return this.parts.backend.cluster;
  }

  async start(): Promise<void> {
    const { processor, webhooks, engine, config, logger, backend, transports } = this.parts;
    // Order matters for crash recovery: the engine requeues parts left 'submitting' before any
    // transport can report, the sender picks up pending webhooks, the processor redoes queued campaigns.
    // A cluster node joins first: the engine's claims carry its id and its SMPP binds need slots.
    try {
      await backend.start();
      await engine.start();
      backend.engineStarted(transports);
    } catch (err) {
      await this.stop();
      throw err;
    }
    webhooks.start();
    processor.start();
    try {
      this.server = await listen(this.app, config.api.host, config.api.port);
      await this.admin?.listen();
    } catch (err) {
      // E.g. the port is taken: undo the start so nothing (reconnect timers, pollers) keeps running.
      logger.error({ err, host: config.api.host, port: config.api.port }, 'cannot listen');
      await this.stop();
      throw err;
    }
    const where = this.address();
    logger.info({ host: where?.host, port: where?.port }, `smsgate listening on http://${where?.host}:${where?.port}`);
  }

  address(): { host: string; port: number } | undefined {
    const info = this.server?.address();
    if (info === null || info === undefined || typeof info === 'string') return undefined;
    return { host: (info as AddressInfo).address, port: (info as AddressInfo).port };
  }

  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private async stopOnce(): Promise<void> {
    const { processor, webhooks, engine, logger, backend } = this.parts;
    if (this.server !== undefined) await closeServer(this.server);
    await this.admin?.close();
    await processor.stop();
    await backend.engineStopping();
    await engine.stop();
    await webhooks.stop();
    await backend.close();
    logger.info('smsgate stopped');
  }
}

function listen(app: Koa, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // Keep-alive connections would hold close() open until their idle timeout.
    server.closeIdleConnections();
  });
}

export type { SmsGateConfig } from './gateway-config.js';
export { loadConfig, resolveConfigFromObject } from './gateway-config.js';
export { signBody, verifySignature } from './webhooks/index.js';
export type { EngineConfig } from './engine/config.js';
export { DispatchEngine } from './engine/dispatch-engine.js';
export { SIMULATOR_DEMO_OUTCOMES, SimulatorTransport } from './transports/simulator/index.js';
export type { SimulatorTransportConfig } from './transports/simulator/index.js';
export type * from './transports/transport.js';
export { GatewayError, isGatewayError } from './errors.js';
export { ERROR_CODE, ERROR_CODES, isErrorCode, type ErrorCode } from './error-codes.js';
export { createLogger, silentLogger } from './log.js';
export type { Logger } from './log.js';
