/**
 * How a gateway runs the SMPP server for customers (config `smppServer`): createGateway builds it
 * with the factory it is given, once the engine exists, and only when the section is set; the
 * running gateway starts it once the engine runs and stops it before the engine drains, so every
 * customer is unbound before the parts they submitted are drained.
 */
import type { ClusterRuntime } from '../cluster/cluster-runtime.js';
import type { Logger } from '../common/log.js';
import type { NodeIdSource } from '../common/node-id.js';
import type { DispatchEngine } from '../engine/dispatch-engine.js';
import type { EngineStore } from '../engine/engine-backend.js';
import type { SmppServerConfig, SmppServerStatusSource } from '../smpp-server/index.js';
import type { StorePorts } from '../store/store-ports.js';
import type { SmsGateConfig } from './config.js';

/** The SMPP server as the gateway runs it (src/smpp-server/smpp-server.ts SmppServer is one). */
export interface SmppServerHook {
  /** Resolves once it listens; rejects (SMPP_SERVER_LISTEN_FAILED naming the keys) when it cannot. */
  start(): Promise<void>;
  /** Unbinds every customer and stops; resolves when no session is left. */
  stop(): Promise<void>;
  /** Sessions, deliveries waiting and submit counts for the status page, /status.json and /metrics. */
  readonly status: SmppServerStatusSource;
  /** Wakes the delivery sender: a commit on this node stored a deliver_sm for a customer. */
  wakeDeliveries(): void;
  /** Where it listens while running (smppServer.port 0 picks a port). */
  address(): { host: string; port: number } | undefined;
}

/** Everything a gateway has built that the SMPP server's parts may need, for either backend. */
export interface SmppServerContext {
  /** The config the gateway was built with; `smppServer` is set (the factory is called only then). */
  config: SmsGateConfig & { smppServer: SmppServerConfig };
  /** The config running now: routes and transports follow each applied reload (the rest needs a restart). */
  runningConfig(): SmsGateConfig;
  ports: StorePorts;
  /** The engine's database: the SQLite Store, or PostgreSQL with the node's id. */
  engineStore: EngineStore;
  /** This node's id for its session rows and delivery leases (SINGLE_GATEWAY on SQLite: null). */
  node: NodeIdSource;
  /** A cluster node's runtime on PostgreSQL; undefined on SQLite. */
  cluster: ClusterRuntime | undefined;
  /** The engine the submits' parts go through (wake() once a submit is stored). */
  engine: DispatchEngine;
  /** The webhook sender, woken when an inbound message goes to a webhook instead. */
  webhooks: { wake(): void };
  /** Tapped by the admin listener (recent errors on the status page), bound to `part: smpp-server`. */
  logger: Logger;
  now: () => number;
}

/** Builds the server from the gateway's parts; nothing listens until start(). */
export type SmppServerFactory = (context: SmppServerContext) => SmppServerHook | Promise<SmppServerHook>;
