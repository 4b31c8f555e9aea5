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
import { openStore, type Store } from './store/database.js';
import { defaultKeyFileFor, SecretBox } from './store/secret-box.js';
import { ServeLock } from './store/serve-lock.js';
import { sqliteStorePorts, type ServeGuard, type StorePorts } from './store/store-ports.js';
import { InboundService } from './inbound/inbound-service.js';
import type { Transport } from './transports/transport.js';
import { enqueueDeliveryReceipt, enqueueDeliveryReceipts, WebhookSender } from './webhooks/index.js';
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
  readonly store: Store;
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
  if (config.database.url !== undefined) {
    // Issue 11 is under way: the admin commands and migrate run on PostgreSQL, the dispatch engine
    // and the webhook sender not yet. Refused plainly rather than quietly serving a SQLite file.
    throw new GatewayError(
      'BACKEND_UNSUPPORTED',
      'database.url: smsgate serve runs on SQLite (database.path) in this version; PostgreSQL (database.url) serves migrate and the admin commands, the nodes of a cluster come in a later version',
    );
  }
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
    return new RunningGateway({ app, store, ports, engine, campaigns, auth, transports, processor, webhooks, config, logger, engineConfig, lock, admin });
  } catch (err) {
    await store.close();
    lock.release();
    throw err;
  }
}

interface GatewayParts {
  app: Koa;
  store: Store;
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
  lock: ServeGuard;
  admin: AdminListener | undefined;
}

class RunningGateway implements Gateway {
  readonly app: Koa;
  readonly store: Store;
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
    this.store = parts.store;
    this.ports = parts.ports;
    this.engine = parts.engine;
    this.campaigns = parts.campaigns;
    this.auth = parts.auth;
    this.transports = parts.transports;
    this.admin = parts.admin;
  }

  async start(): Promise<void> {
    const { processor, webhooks, engine, config, logger } = this.parts;
    // Order matters for crash recovery: the engine requeues parts left 'submitting' before any
    // transport can report, the sender picks up pending webhooks, the processor redoes queued campaigns.
    await engine.start();
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
    const { processor, webhooks, engine, store, logger, lock } = this.parts;
    if (this.server !== undefined) await closeServer(this.server);
    await this.admin?.close();
    await processor.stop();
    await engine.stop();
    await webhooks.stop();
    await store.close();
    lock.release();
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
