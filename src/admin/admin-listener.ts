/**
 * The admin listener as the composition root sees it: built before the engine (its observer and
 * logger tap go into the engine, transports and webhook sender), attached to the transports once
 * they exist, listening on admin.host:admin.port when the gateway starts, closed when it stops.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../common/errors.js';
import type { GatewayObserver, WebhookAttemptDetail, WebhookAttemptResult } from '../gateway-observer.js';
import { packageVersion } from '../common/package-version.js';
import type { Logger } from '../common/log.js';
import type { StorePorts } from '../store/store-ports.js';
import type { PartOutcome, Transport, TransportReceipt, TransportState } from '../transports/transport.js';
import type { AdminConfig } from './admin-config.js';
import { createAdminApp } from './admin-app.js';
import type { ClusterStats } from './cluster-stats.js';
import { readiness, type ClusterReadiness, type ReadinessRoute } from './readiness.js';
import { GatewayMetrics, partOutcomeLabel } from './gateway-metrics.js';
import { servedHostNames } from './host-check.js';
import { WebhookHealth } from './webhook-health.js';
import { RecentErrors, tapLogger } from './recent-errors.js';
import { CampaignProgressCache, type RouteStatus } from './status-facts.js';
import type { ReloadOutcome } from '../config/reload-outcome.js';
import type { SmppServerStatusSource } from '../smpp-server/contracts.js';
import { TransportActivity } from './transport-activity.js';

/** The running config as the status page shows it, and the reload POST /reload asks for. */
export interface AdminConfigView {
  configHash(): string;
  routeStatus(): RouteStatus[];
  reload(): Promise<ReloadOutcome>;
}

/** A cluster node's runtime as the admin listener reads it: /ready and the cluster metrics. */
export interface AdminClusterView extends ClusterReadiness {
  stats(): ClusterStats;
}

export interface AdminListenerDeps {
  config: AdminConfig;
  ports: Pick<StorePorts, 'status' | 'auth' | 'webhooks'>;
  logger: Logger;
  now: () => number;
  /** credits.lowThreshold: clients below it are marked low on the status page; undefined: off. */
  lowCreditsThreshold?: number;
}

export interface AdminListener {
  readonly observer: GatewayObserver;
  readonly metrics: GatewayMetrics;
  /** A logger like `logger` whose warn/error events also go to the status page's recent errors. */
  tapLogger(logger: Logger): Logger;
  /** `routes`: the config's routes, each of which /ready wants a transport up to carry. */
  attach(parts: { transports: readonly Transport[]; routes?: readonly ReadinessRoute[]; wakeWebhooks(): void; writesStalled?(): boolean; cluster?: AdminClusterView }): void;
  /** The running config's hash and routes, and the reload (after attach, once the gateway is built). */
  attachConfig(view: AdminConfigView): void;
  /** The SMPP server for customers (config smppServer): its sessions and deliveries waiting on the page, its series in /metrics. */
  attachSmppServer(status: SmppServerStatusSource): void;
  /** A reload changed the running transports or routes. */
  replaceTransports(transports: readonly Transport[], routes: readonly ReadinessRoute[]): void;
  listen(): Promise<void>;
  close(): Promise<void>;
  /** Where it listens once listening. */
  address(): { host: string; port: number } | undefined;
}

/**
 * What the engine and the webhook sender report goes to the metrics and, for the status page, to
 * the part counts per transport (throttled told apart by the transport's status) and the webhook
 * endpoints' health (breaker, last real error).
 */
class AdminObserver implements GatewayObserver {
  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly activity: TransportActivity,
    private readonly webhookHealth: WebhookHealth,
  ) {}

  partsSubmitted(transport: string, parts: number): void {
    this.metrics.partsSubmitted(transport, parts);
  }

  partOutcome(transport: string, outcome: PartOutcome): void {
    this.metrics.partOutcome(transport, outcome);
    this.activity.outcome(transport, partOutcomeLabel(outcome), outcome);
  }

  receiptReceived(transport: string, receipt: TransportReceipt): void {
    this.metrics.receiptReceived(transport, receipt);
  }

  inboundPart(transport: string): void {
    this.metrics.inboundPart(transport);
  }

  inboundMessage(transport: string, incomplete: boolean): void {
    this.metrics.inboundMessage(transport, incomplete);
  }

  webhookAttempt(result: WebhookAttemptResult, lagMs?: number, detail?: WebhookAttemptDetail): void {
    this.metrics.webhookAttempt(result, lagMs);
    if (detail !== undefined) this.webhookHealth.attempted(detail);
  }

  dbCommit(seconds: number): void {
    this.metrics.dbCommit(seconds);
  }

  httpRequest(route: string, method: string, status: number, seconds: number): void {
    this.metrics.httpRequest(route, method, status, seconds);
  }

  transportState(transport: string, state: TransportState, atMs: number): void {
    this.metrics.transportState(transport, state, atMs);
  }
}

function versionOrUnknown(): string {
  try {
    return packageVersion();
  } catch {
    return 'unknown';
  }
}

export function createAdminListener(deps: AdminListenerDeps): AdminListener {
  const activity = new TransportActivity(deps.now);
  const recentErrors = new RecentErrors(50, deps.now);
  const webhookHealth = new WebhookHealth(deps.now);
  const startedAtMs = deps.now();
  const version = versionOrUnknown();
  let transports: readonly Transport[] = [];
  let routes: readonly ReadinessRoute[] | undefined;
  let wakeWebhooks = (): void => {};
  let writesStalled = (): boolean => false;
  let cluster: ClusterReadiness | undefined;
  let configView: AdminConfigView | undefined;
  let smppServer: SmppServerStatusSource | undefined;
  const ready = () => readiness(deps.ports.status, transports, writesStalled, cluster, routes);
  const metrics = new GatewayMetrics({
    status: deps.ports.status,
    activity,
    transports: () => transports,
    now: deps.now,
    // The same decision as GET /ready, so smsgate_ready and /ready never disagree.
    ready: async () => (await ready()).ready,
  });
  let server: Server | undefined;

  return {
    observer: new AdminObserver(metrics, activity, webhookHealth),
    metrics,
    tapLogger: (logger) => tapLogger(logger, recentErrors),
    attach(parts) {
      transports = parts.transports;
      routes = parts.routes;
      wakeWebhooks = parts.wakeWebhooks;
      if (parts.writesStalled !== undefined) writesStalled = parts.writesStalled;
      cluster = parts.cluster;
      if (parts.cluster !== undefined) {
        const view = parts.cluster;
        metrics.watchCluster(() => view.stats());
      }
      metrics.zeroSeriesFor(transports.map((t) => t.name));
    },
    attachConfig(view) {
      configView = view;
    },
    attachSmppServer(status) {
      smppServer = status;
      metrics.watchSmppServer(status);
    },
    replaceTransports(next, nextRoutes) {
      transports = next;
      routes = nextRoutes;
      metrics.zeroSeriesFor(transports.map((t) => t.name));
    },
    async listen() {
      const app = createAdminApp({
        status: deps.ports.status,
        replayPorts: deps.ports,
        get transports() {
          return transports;
        },
        activity,
        recentErrors,
        webhookHealth,
        version,
        startedAtMs,
        readiness: ready,
        progress: new CampaignProgressCache(),
        now: deps.now,
        ...(deps.lowCreditsThreshold === undefined ? {} : { lowCreditsThreshold: deps.lowCreditsThreshold }),
        metrics,
        ...(deps.config.token === undefined ? {} : { token: deps.config.token }),
        servedHosts: () => servedHostNames(deps.config.host, deps.config.allowedHosts ?? []),
        wakeWebhooks: () => wakeWebhooks(),
        logger: deps.logger,
        configHash: () => configView?.configHash() ?? 'unknown',
        routeStatus: () => configView?.routeStatus() ?? [],
        smppServer: () => smppServer,
        reload: () => (configView === undefined ? undefined : configView.reload()),
        tokenRequired: deps.config.token !== undefined,
      });
      const { host, port } = deps.config;
      server = await new Promise<Server>((resolve, reject) => {
        const listening = app.listen(port, host);
        listening.once('listening', () => resolve(listening));
        listening.once('error', (err: NodeJS.ErrnoException) => {
          // Named as the admin listener's, so a taken port is not mistaken for the API's.
          reject(new GatewayError('ADMIN_LISTEN_FAILED', `admin listener cannot listen on ${host}:${port} (admin.host, admin.port): ${err.code ?? err.message}`, { cause: err }));
        });
      });
      const where = this.address();
      // Never the token: only where it listens and whether one is required.
      deps.logger.info({ host: where?.host, port: where?.port, tokenRequired: deps.config.token !== undefined }, `admin listener up at http://${where?.host}:${where?.port}`);
    },
    async close() {
      const closing = server;
      server = undefined;
      if (closing === undefined) return;
      await new Promise<void>((resolve) => {
        closing.close(() => resolve());
        closing.closeIdleConnections();
      });
    },
    address() {
      const info = server?.address();
      if (info === null || info === undefined || typeof info === 'string') return undefined;
      return { host: (info as AddressInfo).address, port: (info as AddressInfo).port };
    },
  };
}
