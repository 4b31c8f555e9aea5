/**
 * The embeddable gateway: `createGateway(config)` wires the store (migrations applied), auth, the
 * campaign API and its background processor, the dispatch engine with its transports, and the
 * webhook sender into one object that starts and stops as a unit. `smsgate serve` is this plus
 * signal handling. The pure core is exported beside it for programs that embed only that.
 */
import { createAdminListener } from './admin/admin-listener.js';
import { AuthService } from './auth/index.js';
import type { SmsGateConfig } from './gateway-config.js';
import { resolveEngineConfig, type EngineConfig } from './engine/config.js';
import { createTransports } from './engine/transport-factory.js';
import { silentLogger } from './common/log.js';
import { createClusterNode } from './cluster/cluster-node.js';
import { buildGatewayLoops } from './gateway-loops.js';
import { RunningGateway, type Gateway, type GatewayBackend, type GatewayOptions } from './running-gateway.js';
import { openStore, type Store } from './store/sqlite/database.js';
import { defaultKeyFileFor, keyFileWithoutDatabaseProblem, sealedSecretOf, secretBoxForDatabase, sqliteFileIsNew } from './store/secret-box.js';
import { ServeLock } from './store/sqlite/serve-lock.js';
import { sqliteStorePorts, type ServeGuard } from './store/store-ports.js';
import { WebhookSender } from './webhooks/index.js';
import { WebhookSenderThread } from './webhooks/sender-thread.js';

export type { Gateway, GatewayOptions } from './running-gateway.js';

/**
 * Builds a gateway. Async because opening the store applies pending migrations and auth loads (or
 * makes) its signing key; nothing listens and nothing is sent until start().
 */
export async function createGateway(config: SmsGateConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? silentLogger();
  const now = options.now ?? Date.now;
  const engineConfig: EngineConfig = resolveEngineConfig(config.engine);
  // Database.url makes this gateway a node of a cluster on PostgreSQL.
  if (config.database.url !== undefined) return createClusterNode(config, options, { logger, now, engineConfig });
  // One gateway per SQLite file (README "serve"): refused at once, before the database is touched.
  const lock: ServeGuard = ServeLock.acquire(config.database.path, now);
  const keyFile = config.database.keyFile ?? defaultKeyFileFor(config.database.path);
  let store: Store;
  try {
    // A key file beside no database: refused before a new database file is made (secret-box.ts).
    const orphanKey = keyFileWithoutDatabaseProblem(keyFile, config.database.path, sqliteFileIsNew(config.database.path));
    if (orphanKey !== null) throw orphanKey;
    store = await openStore({ path: config.database.path, synchronous: config.database.synchronous });
  } catch (err) {
    lock.release();
    throw err;
  }
  try {
    // The one place the backend's ports are chosen.
    const ports = sqliteStorePorts(store);
    const sealed = await sealedSecretOf(ports.auth);
    const emptyBesideKey = keyFileWithoutDatabaseProblem(keyFile, config.database.path, sealed === undefined);
    if (emptyBesideKey !== null) throw emptyBesideKey;
    const secretBox = secretBoxForDatabase(keyFile, sealed, config.database.path);
    store.file?.onMoved((problem) => logger.error({ path: config.database.path, code: problem.code }, problem.message));
    // Metrics and the status page's recent errors see the engine, transports and webhooks.
    const admin = config.admin === undefined ? undefined : createAdminListener({ config: config.admin, ports, logger: logger.child({ part: 'admin' }), now });
    const observed = admin?.tapLogger(logger) ?? logger;
    const auth = await AuthService.create(ports.auth, config.auth, secretBox, { now, logger: logger.child({ part: 'auth' }) });
    // The sender runs on its own thread (the second core) when built; an injected clock
    // (tests) or the TypeScript sources keep it in this thread.
    const webhooks: WebhookSender | WebhookSenderThread =
      options.now === undefined && WebhookSenderThread.available()
        ? new WebhookSenderThread({
            db: store.db,
            databasePath: config.database.path,
            busyTimeoutMs: 5_000,
            keyFile,
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
    const { engine, processor, campaigns, app } = buildGatewayLoops({
      config, engineConfig, ports, auth, engineStore: store, transports, webhooks, logger, observed, now, admin,
    });
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

export type { SmsGateConfig } from './gateway-config.js';
export { loadConfig, resolveConfigFromObject } from './gateway-config.js';
export { signBody, verifySignature } from './webhooks/index.js';
export type { EngineConfig } from './engine/config.js';
export { DispatchEngine } from './engine/dispatch-engine.js';
export { SIMULATOR_DEMO_OUTCOMES, SimulatorTransport } from './transports/simulator/index.js';
export type { SimulatorTransportConfig } from './transports/simulator/index.js';
export type * from './transports/transport.js';
export { GatewayError, isGatewayError } from './common/errors.js';
export { ERROR_CODE, ERROR_CODES, isErrorCode, type ErrorCode } from './common/error-codes.js';
export { createLogger, silentLogger } from './common/log.js';
export type { Logger } from './common/log.js';
