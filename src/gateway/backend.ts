/**
 * What a database backend gives the composition layer: everything that differs between a gateway
 * on its SQLite file and a node of a cluster on PostgreSQL. createGateway (./create-gateway.ts)
 * and the admin commands (src/cli/admin-session.ts) ask backendFor (./backends.ts) for the one
 * the config selects and wire the rest the same way; a backend never builds the loops, the API or
 * the admin listener.
 */
import type { BindSlotGate } from '../transports/smpp/smpp-transport.js';
import type { ClusterWakeTargets } from '../cluster/cluster-runtime.js';
import type { DatabaseConfig } from '../config/types.js';
import type { Logger } from '../common/log.js';
import type { NodeIdSource } from '../common/node-id.js';
import type { EngineStore } from '../engine/engine-backend.js';
import type { GatewayObserver } from '../gateway-observer.js';
import type { SecretBox } from '../store/secret-box.js';
import type { Store } from '../store/sqlite/database.js';
import type { DatabaseBackup, StorePorts } from '../store/store-ports.js';
import type { WebhookSender } from '../webhooks/index.js';
import type { WebhookSenderThread } from '../webhooks/sender-thread.js';
import type { SmsGateConfig } from './config.js';
import type { GatewayBackend } from './running-gateway.js';

export type BackendKind = 'sqlite' | 'postgres';

/** How an admin command opens the database. */
export interface SessionOptions {
  /** Apply pending migrations first. */
  migrate: boolean;
  /** SQLite: create the database file when there is none (default false: exit 1 naming the file). */
  createIfMissing?: boolean;
}

/** An open database as the admin commands use it. */
export interface StoreSession {
  /**
   * The stores every command reads and writes through. Built on first use: the SQLite stores
   * prepare their statements against the schema, and `db backup` (migrate: false) must copy a
   * database whatever its schema version, without preparing any.
   */
  readonly ports: StorePorts;
  /** `smsgate db backup`'s copier; undefined on a backend without one (PostgreSQL: pg_dump, a replica). */
  readonly backup: DatabaseBackup | undefined;
  /**
   * The SQLite store itself, only for the engine-side parts that still take it whole
   * (WebhookSender); undefined on PostgreSQL.
   */
  readonly store: Store | undefined;
  close(): Promise<void>;
}

/** What the gateway hands a backend once the ports exist and the admin listener (if any) is built. */
export interface BackendContext {
  config: SmsGateConfig;
  /** The logger the admin listener taps (recent errors on the status page). */
  observed: Logger;
  now: () => number;
  /** The caller injected the clock (tests): background work stays on this thread, on that clock. */
  clockInjected: boolean;
  /** The admin listener's metrics hooks; undefined without an admin section. */
  observer: GatewayObserver | undefined;
  /** The loops to wake when another node (or a takeover) made work for them; set before start(). */
  wake: ClusterWakeTargets;
}

/** The backend's share of a running gateway: its lifecycle hooks and the parts the loops run on. */
export interface BackendRuntime extends GatewayBackend {
  /** The dispatch engine's database: the SQLite Store, or PostgreSQL with the node's id. */
  readonly engineStore: EngineStore;
  /** The webhook sender on this backend's outbox. */
  readonly webhooks: WebhookSender | WebhookSenderThread;
  /** The SMPP transports' bind slot gate (a cluster shares a carrier's binds); undefined: bind them all. */
  readonly slotGate: BindSlotGate | undefined;
  /** A cluster node's id for the campaign processor's claims; undefined for a single gateway. */
  readonly node: NodeIdSource | undefined;
}

/** A database opened for a gateway, before the loops exist. */
export interface OpenedBackend {
  readonly ports: StorePorts;
  /** The key the database's secrets are sealed with (checked against the database at open). */
  readonly secretBox: SecretBox;
  /** Builds the backend's runtime (on PostgreSQL: joins the cluster). Called at most once. */
  attach(context: BackendContext): Promise<BackendRuntime>;
  /** Closes what open() opened, when no runtime was attached (a failed build). */
  close(): Promise<void>;
}

/** One database backend: how the gateway and the admin commands open it. */
export interface Backend {
  readonly kind: BackendKind;
  /** `smsgate serve` and createGateway: the database with migrations applied, checked for serving. */
  openGateway(config: SmsGateConfig, context: { now: () => number; logger: Logger }): Promise<OpenedBackend>;
  /** The admin commands: the database as `options` says, with its ports and backup. */
  openSession(database: DatabaseConfig, options: SessionOptions): Promise<StoreSession>;
}
