/**
 * The composition root of a node of a cluster on PostgreSQL: what createGateway
 * (src/index.ts) builds when `database.url` is set.
 */
import { createAdminListener } from '../admin/admin-listener.js';
import { AuthService } from '../auth/index.js';
import { serveKeyFileProblem } from '../config/database.js';
import type { EngineConfig } from '../engine/config.js';
import type { DispatchEngine } from '../engine/dispatch-engine.js';
import type { CampaignProcessor } from '../campaigns/index.js';
import { buildGatewayLoops } from '../gateway-loops.js';
import { createTransports } from '../engine/transport-factory.js';
import { GatewayError } from '../common/errors.js';
import type { SmsGateConfig } from '../gateway-config.js';
import type { Logger } from '../common/log.js';
import { RunningGateway, type Gateway, type GatewayBackend, type GatewayOptions } from '../running-gateway.js';
import { openDatabase, type Store } from '../store/sqlite/database.js';
import { createPgStores } from '../store/postgres/stores.js';
import { PgWebhookStore } from '../store/postgres/webhook-store.js';
import { sealedSecretOf, secretBoxForDatabase, type SecretBox } from '../store/secret-box.js';
import type { StorePorts } from '../store/store-ports.js';
import { PgWebhookOutbox, WebhookSender } from '../webhooks/index.js';
import type { ClusterRuntime } from './cluster-runtime.js';
import { clusterSettingsOf } from './config-agreement.js';
import { joinPgCluster } from './postgres-cluster.js';

/**
 * A node of a cluster on PostgreSQL: the same API, processor, engine and sender as a
 * single gateway, on the PostgreSQL stores, with the node's cluster runtime (membership, takeover,
 * bind slots, wake-ups: src/cluster). No ServeLock: every `serve` on the database is a node.
 */
export async function createClusterNode(
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
    const ports: StorePorts = createPgStores(database.pool);
    const secretBox = await sharedSecretBox(ports, config.database.keyFile, database.describe);
    const admin = config.admin === undefined ? undefined : createAdminListener({ config: config.admin, ports, logger: logger.child({ part: 'admin' }), now });
    const observed = admin?.tapLogger(logger) ?? logger;
    // The loops exist only after the runtime (they take its node id and slot gate); its wake-ups reach them once built.
    const loops: { engine?: DispatchEngine; webhooks?: WebhookSender; processor?: CampaignProcessor } = {};
    cluster = await joinPgCluster({
      url,
      apiPort: config.api.port === 0 ? null : config.api.port,
      settings: clusterSettingsOf(config.transports),
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
    const { engine, processor, campaigns, app } = buildGatewayLoops({
      config, engineConfig, ports, auth, engineStore: { kind: 'postgres', pool: database.pool, node }, transports, webhooks, logger, observed, now, admin,
      node, cluster,
    });
    loops.engine = engine;
    loops.processor = processor;
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
 * cluster"): a node with another key, or none, would seal new secrets with a key of its own and fail
 * to open the webhook secrets and signing keys the others wrote. Refused at start, naming the file;
 * a missing key file is made only for a database that holds no sealed secret yet (the first node):
 * the rule every command follows (secretBoxForDatabase).
 */
async function sharedSecretBox(ports: StorePorts, keyFile: string, databaseName: string): Promise<SecretBox> {
  return secretBoxForDatabase(keyFile, await sealedSecretOf(ports.auth), databaseName);
}
