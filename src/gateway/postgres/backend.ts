/**
 * The PostgreSQL backend (`database.url`): every `serve` on the database is a node of a cluster, so
 * beside the stores it adds the node's cluster runtime (membership, takeover, bind slots,
 * wake-ups: src/cluster). No ServeLock. The loops, the API and the admin listener are wired by
 * createGateway exactly as on SQLite.
 */
import { joinPgCluster } from '../../cluster/postgres-cluster.js';
import { clusterSettingsOf } from '../../cluster/config-agreement.js';
import type { ClusterRuntime } from '../../cluster/cluster-runtime.js';
import { serveKeyFileProblem } from '../../config/database.js';
import type { DatabaseConfig } from '../../config/types.js';
import { GatewayError } from '../../common/errors.js';
import { sealedSecretOf, secretBoxForDatabase, type SecretBox } from '../../store/secret-box.js';
import { openDatabase, type Database, type Store } from '../../store/sqlite/database.js';
import { createPgStores } from '../../store/postgres/stores.js';
import { PgWebhookStore } from '../../store/postgres/webhook-store.js';
import type { StorePorts } from '../../store/store-ports.js';
import { PgWebhookOutbox, WebhookSender } from '../../webhooks/index.js';
import type { Backend, BackendContext, BackendRuntime, OpenedBackend, SessionOptions, StoreSession } from '../backend.js';
import type { SmsGateConfig } from '../config.js';

type PgDatabase = Extract<Database, { kind: 'postgres' }>;

export const POSTGRES_BACKEND: Backend = {
  kind: 'postgres',
  openGateway,
  openSession,
};

async function openPostgres(database: DatabaseConfig, options: Parameters<typeof openDatabase>[1]): Promise<PgDatabase> {
  const opened = await openDatabase(database, options);
  if (opened.kind === 'postgres') return opened;
  await opened.close();
  throw new GatewayError('BACKEND_UNSUPPORTED', 'database.url: expected a PostgreSQL database');
}

async function openGateway(config: SmsGateConfig): Promise<OpenedBackend> {
  const keyFileProblem = serveKeyFileProblem(config.database);
  if (keyFileProblem !== null) throw keyFileProblem;
  const database = await openPostgres(config.database, {});
  try {
    const ports: StorePorts = createPgStores(database.pool);
    const secretBox = await sharedSecretBox(ports, config.database.keyFile, database.describe);
    return {
      ports,
      secretBox,
      attach: (context) => pgRuntime(context, database, secretBox),
      close: () => database.close(),
    };
  } catch (err) {
    await database.close();
    throw err;
  }
}

/**
 * Joins the cluster (the engine's claims and the sender's leases carry this node's id, its SMPP
 * binds need slots), then builds the sender on the node's outbox.
 */
async function pgRuntime({ config, observed, now, observer, wake }: BackendContext, database: PgDatabase, secretBox: SecretBox): Promise<BackendRuntime> {
  let cluster: ClusterRuntime | undefined;
  try {
    cluster = await joinPgCluster({
      url: config.database.url as string,
      apiPort: config.api.port === 0 ? null : config.api.port,
      settings: clusterSettingsOf(config.transports),
      logger: observed,
      wake,
    });
    const runtime = cluster;
    const node = runtime.node;
    const webhooks = new WebhookSender({
      outbox: new PgWebhookOutbox(new PgWebhookStore(database.pool), node),
      secretBox,
      logger: observed.child({ part: 'webhooks' }),
      config: config.webhooks,
      now,
      ...(observer === undefined ? {} : { observer }),
    });
    return {
      get store(): Store {
        throw new GatewayError('BACKEND_UNSUPPORTED', `gateway.store: this node runs on PostgreSQL (${database.describe}); use gateway.ports`);
      },
      cluster: runtime,
      engineStore: { kind: 'postgres', pool: database.pool, node },
      webhooks,
      slotGate: runtime.slotGate,
      node,
      start: () => runtime.start(),
      engineStarted: (started) => runtime.beginSlotSync(started),
      engineStopping: () => runtime.endSlotSync(),
      async close() {
        // After the engine drained (it requeued its own claims) and the sender stopped.
        await runtime.stop();
        await database.close();
      },
    };
  } catch (err) {
    await cluster?.stop().catch(() => undefined);
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

async function openSession(database: DatabaseConfig, options: SessionOptions): Promise<StoreSession> {
  const opened = await openPostgres(database, { migrate: options.migrate, maxConnections: 2 });
  let ports: StorePorts | undefined;
  return {
    store: undefined,
    get ports() {
      return (ports ??= createPgStores(opened.pool));
    },
    // A PostgreSQL database is backed up with PostgreSQL's own tools (pg_dump, a replica).
    backup: undefined,
    close: () => opened.close(),
  };
}
