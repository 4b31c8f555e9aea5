/**
 * The admin listener as the composition root sees it: built before the engine (its observer and
 * logger tap go into the engine, transports and webhook sender), attached to the transports once
 * they exist, listening on admin.host:admin.port when the gateway starts, closed when it stops.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../errors.js';
import type { GatewayObserver } from '../gateway-observer.js';
import type { Logger } from '../log.js';
import type { StorePorts } from '../store/store-ports.js';
import type { Transport } from '../transports/transport.js';
import type { AdminConfig } from './admin-config.js';
import { createAdminApp } from './admin-app.js';
import type { ClusterStats } from '../cluster/cluster-runtime.js';
import { readiness, type ClusterReadiness } from './readiness.js';
import { GatewayMetrics } from './gateway-metrics.js';
import { RecentErrors, tapLogger } from './recent-errors.js';
import { CampaignProgressCache } from './status-facts.js';
import { TransportActivity } from './transport-activity.js';

/** A cluster node's runtime as the admin listener reads it: /ready and the cluster metrics. */
export interface AdminClusterView extends ClusterReadiness {
  stats(): ClusterStats;
}

export interface AdminListenerDeps {
  config: AdminConfig;
  ports: Pick<StorePorts, 'status' | 'auth' | 'webhooks'>;
  logger: Logger;
  now: () => number;
}

export interface AdminListener {
  readonly observer: GatewayObserver;
  readonly metrics: GatewayMetrics;
  /** A logger like `logger` whose warn/error events also go to the status page's recent errors. */
  tapLogger(logger: Logger): Logger;
  attach(parts: { transports: readonly Transport[]; wakeWebhooks(): void; writesStalled?(): boolean; cluster?: AdminClusterView }): void;
  listen(): Promise<void>;
  close(): Promise<void>;
  /** Where it listens once listening. */
  address(): { host: string; port: number } | undefined;
}

export function createAdminListener(deps: AdminListenerDeps): AdminListener {
  const activity = new TransportActivity(deps.now);
  const recentErrors = new RecentErrors(50, deps.now);
  let transports: readonly Transport[] = [];
  let wakeWebhooks = (): void => {};
  let writesStalled = (): boolean => false;
  let cluster: ClusterReadiness | undefined;
  const metrics = new GatewayMetrics({
    status: deps.ports.status,
    activity,
    transports: () => transports,
    now: deps.now,
    // The same decision as GET /ready (readiness.ts), so smsgate_ready and /ready never disagree.
    ready: async () => (await readiness(deps.ports.status, transports, () => writesStalled(), cluster)).ready,
  });
  let server: Server | undefined;

  return {
    observer: metrics,
    metrics,
    tapLogger: (logger) => tapLogger(logger, recentErrors),
    attach(parts) {
      transports = parts.transports;
      wakeWebhooks = parts.wakeWebhooks;
      if (parts.writesStalled !== undefined) writesStalled = parts.writesStalled;
      cluster = parts.cluster;
      if (parts.cluster !== undefined) {
        const view = parts.cluster;
        metrics.watchCluster(() => view.stats());
      }
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
        progress: new CampaignProgressCache(),
        now: deps.now,
        metrics,
        ...(deps.config.token === undefined ? {} : { token: deps.config.token }),
        wakeWebhooks: () => wakeWebhooks(),
        writesStalled: () => writesStalled(),
        cluster: () => cluster,
        logger: deps.logger,
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
