/**
 * A built gateway as it starts and stops (createGateway in ./create-gateway.ts builds one for
 * either backend): the loops both run, in the order crash recovery needs, around what differs
 * between the two backends (GatewayBackend, given by ./sqlite/backend.ts or ./postgres/backend.ts).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { AdminListener } from '../admin/admin-listener.js';
import type { AuthService } from '../auth/index.js';
import type { CampaignProcessor, CampaignService } from '../campaigns/index.js';
import type { ClusterRuntime } from '../cluster/cluster-runtime.js';
import type { EngineConfig } from '../engine/config.js';
import type { DispatchEngine } from '../engine/dispatch-engine.js';
import type { SmsGateConfig } from './config.js';
import type { Logger } from '../common/log.js';
import type { Store } from '../store/sqlite/database.js';
import type { StorePorts } from '../store/store-ports.js';
import type { Transport } from '../transports/transport.js';
import type { WebhookSender } from '../webhooks/index.js';
import type { WebhookSenderThread } from '../webhooks/sender-thread.js';
import type { ReloadOutcome } from '../config/reload-outcome.js';
import type { ConfigReloader } from './config-reload.js';
import type { SmppServerFactory, SmppServerHook } from './smpp-server-hook.js';

export interface GatewayOptions {
  logger?: Logger;
  /**
   * Transports to use instead of building them from config.transports (tests, embedding). Names
   * must match the routes. On PostgreSQL these get no bind slot gate: an SMPP transport given here
   * binds all its `binds` on this node whatever the other nodes hold; build from config to share them.
   */
  transports?: Transport[];
  /** Clock for the engine and the background workers; defaults to Date.now. */
  now?: () => number;
  /** The file `config` was loaded from: what reload() re-reads (`smsgate serve` sets it). */
  configFile?: string;
  /**
   * Builds the SMPP server for customers (src/gateway/smpp-server-hook.ts); called only when
   * config.smppServer is set. Default: the server itself (src/gateway/smpp-server-factory.ts).
   */
  smppServerFactory?: SmppServerFactory;
}

export interface Gateway {
  readonly app: Koa;
  /**
   * The SQLite store of a single gateway (database.path). A node on PostgreSQL has none: reading it
   * there throws BACKEND_UNSUPPORTED (use `ports`, or `cluster` for the node's runtime).
   */
  readonly store: Store;
  /** The node's cluster runtime when database.url selects PostgreSQL; undefined on SQLite. */
  readonly cluster: ClusterRuntime | undefined;
  /** The async store ports everything outside the engine and the webhook sender uses. */
  readonly ports: StorePorts;
  readonly engine: DispatchEngine;
  readonly campaigns: CampaignService;
  readonly auth: AuthService;
  /** The transports running now (a reload may start, rebind or remove some). */
  readonly transports: readonly Transport[];
  /** The admin listener (metrics, status page, readiness) when config.admin is set. */
  readonly admin: AdminListener | undefined;
  /** sha256 of the running config's canonical JSON (src/config/config-hash.ts), as /status.json shows it. */
  readonly configHash: string;
  /**
   * Re-reads GatewayOptions.configFile (or takes `next`) and applies its routes and transports
   * (docs/behaviour/reload.md); a config that does not validate is refused whole and nothing changes.
   */
  reload(next?: SmsGateConfig): Promise<ReloadOutcome>;
  /** Starts the background workers and the transports, then listens on api.host:api.port (port 0 picks one). */
  start(): Promise<void>;
  /** Stops listening, drains the engine (bounded by engine.drainTimeoutMs), stops transports and workers, closes the store. */
  stop(): Promise<void>;
  /** Where the API listens once started. */
  address(): { host: string; port: number } | undefined;
  /** The SMPP server for customers when config.smppServer is set (and a factory built it). */
  readonly smppServer: SmppServerHook | undefined;
}

/**
 * What differs between a single gateway on its SQLite file and a node of a cluster on PostgreSQL,
 * around the loops both run. Called in this order by RunningGateway.
 */
export interface GatewayBackend {
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

export interface GatewayParts {
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
  /** The credits.lowThreshold check (src/admin/low-credits-watch.ts); undefined when no threshold is set. */
  lowCredits?: { start(): void; stop(): Promise<void> } | undefined;
  reloader: ConfigReloader;
  /** The SMPP server for customers; undefined without config.smppServer. */
  smppServer?: SmppServerHook | undefined;
}

export class RunningGateway implements Gateway {
  readonly app: Koa;
  readonly ports: StorePorts;
  readonly engine: DispatchEngine;
  readonly campaigns: CampaignService;
  readonly auth: AuthService;
  readonly admin: AdminListener | undefined;
  private server: Server | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly parts: GatewayParts) {
    this.app = parts.app;
    this.ports = parts.ports;
    this.engine = parts.engine;
    this.campaigns = parts.campaigns;
    this.auth = parts.auth;
    this.admin = parts.admin;
  }

  get transports(): readonly Transport[] {
    return this.parts.engine.currentTransports();
  }

  get configHash(): string {
    return this.parts.reloader.configHash;
  }

  reload(next?: SmsGateConfig): Promise<ReloadOutcome> {
    return this.parts.reloader.reload(next);
  }

  get store(): Store {
    return this.parts.backend.store;
  }

  get smppServer(): SmppServerHook | undefined {
    return this.parts.smppServer;
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
    this.parts.lowCredits?.start();
    // Customers bind once the engine runs: a submit stored from then on is claimed and sent.
    try {
      await this.parts.smppServer?.start();
    } catch (err) {
      logger.error({ err }, 'the SMPP server cannot start');
      await this.stop();
      throw err;
    }
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
    const { processor, webhooks, engine, logger, backend, reloader } = this.parts;
    // A reload in progress (a transport draining) finishes first; none starts after this.
    await reloader.close();
    if (this.server !== undefined) await closeServer(this.server);
    // Customers are unbound before the engine drains: none submits into a stopping gateway, and
    // what they submitted is drained with everything else.
    await this.parts.smppServer?.stop();
    await this.admin?.close();
    await processor.stop();
    await this.parts.lowCredits?.stop();
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
