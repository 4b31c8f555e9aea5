/**
 * The loops every gateway runs, whatever its database: the inbound service, the dispatch
 * engine, the campaign processor, the campaign service and the API app, wired to each other the
 * same way on SQLite and on PostgreSQL (./create-gateway.ts). What differs comes from the backend
 * (./backend.ts): the engine's store, the node id, the cluster view for the admin listener.
 */
import type Koa from 'koa';
import type { PricingRule } from '../accounts/credits.js';
import type { AdminClusterView, AdminListener } from '../admin/admin-listener.js';
import { createApiApp } from '../api/app.js';
import type { AuthService } from '../auth/index.js';
import { CampaignProcessor, CampaignService } from '../campaigns/index.js';
import type { NodeIdSource } from '../common/node-id.js';
import type { EngineConfig } from '../engine/config.js';
import { DispatchEngine } from '../engine/dispatch-engine.js';
import type { EngineStore } from '../engine/engine-backend.js';
import type { SmsGateConfig } from './config.js';
import { InboundService } from '../inbound/inbound-service.js';
import type { Logger } from '../common/log.js';
import { numberingPlanFor } from '../sms/numbering.js';
import type { StorePorts } from '../store/store-ports.js';
import type { Transport } from '../transports/transport.js';
import { enqueueDeliveryReceipt, enqueueDeliveryReceipts } from '../webhooks/index.js';

export interface GatewayLoopsDeps {
  config: SmsGateConfig;
  engineConfig: EngineConfig;
  ports: StorePorts;
  auth: AuthService;
  /** The engine's database: a SQLite Store, or PostgreSQL with the node's id. */
  engineStore: EngineStore;
  transports: readonly Transport[];
  /** The webhook sender (either kind): woken when receipts or inbound messages queued events. */
  webhooks: { wake(): void };
  /** The SMPP server's delivery sender, woken when a commit stored a deliver_sm for a customer (a no-op without the server). */
  smppDeliveries: { wake(): void };
  logger: Logger;
  /** The logger the admin listener taps (recent errors on the status page); `logger` without one. */
  observed: Logger;
  now: () => number;
  admin: AdminListener | undefined;
  /** A cluster node's id for the campaign processor's claims; absent for a single gateway. */
  node?: NodeIdSource;
  /** A cluster node's view for /ready and the cluster metrics. */
  cluster?: AdminClusterView;
}

export interface GatewayLoops {
  engine: DispatchEngine;
  processor: CampaignProcessor;
  campaigns: CampaignService;
  app: Koa;
}

export function buildGatewayLoops(deps: GatewayLoopsDeps): GatewayLoops {
  const { config, ports, auth, transports, webhooks, logger, observed, now, admin } = deps;
  const numbering = numberingPlanFor(config.numbering.country);
  // Config `pricing`: what a part to a number costs (no rules: 1 credit each).
  const { pricing } = config;
  const observer = admin === undefined ? {} : { observer: admin.observer };
  const inbound = new InboundService({
    store: ports.inbound,
    logger: observed.child({ part: 'engine' }).child({ part: 'inbound' }),
    now,
    wakeWebhooks: () => webhooks.wake(),
    wakeSmppDeliveries: () => deps.smppDeliveries.wake(),
    ...(deps.engineConfig.receiptRetentionHours === undefined ? {} : { smppRetentionHours: deps.engineConfig.receiptRetentionHours }),
    numbering,
    ...observer,
    reassemblyTimeoutMs: config.inbound.reassemblyTimeoutMs,
    ...(config.inbound.sweepIntervalMs === undefined ? {} : { sweepIntervalMs: config.inbound.sweepIntervalMs }),
    partLimits: { maxPartsPerOriginator: config.inbound.maxPartsPerOriginator, maxParts: config.inbound.maxParts },
  });
  const cluster = deps.cluster;
  const engine = new DispatchEngine({
    store: deps.engineStore,
    transports,
    routes: config.routes,
    // A cluster node holding none of a transport's bind slots does not fail its routes over: the
    // nodes holding them judge the carrier by their binds (docs/behaviour/routes.md).
    ...(cluster === undefined ? {} : { isTransportUp: (t: Transport): boolean => t.currentState().state === 'bound' || cluster.bindsHeldByPeers(t) }),
    config: deps.engineConfig,
    logger: observed.child({ part: 'engine' }),
    // On PostgreSQL the engine writes its outbox rows itself; only wake() is used there.
    deliveryReceipts: { enqueue: enqueueDeliveryReceipt, enqueueMany: enqueueDeliveryReceipts, wake: () => webhooks.wake() },
    smppDeliveries: deps.smppDeliveries,
    now,
    numbering,
    inbound,
    ...observer,
  });
  admin?.attach({
    transports,
    routes: config.routes,
    wakeWebhooks: () => webhooks.wake(),
    writesStalled: () => engine.stats().writesStalled,
    ...(deps.cluster === undefined ? {} : { cluster: deps.cluster }),
  });
  const processor = new CampaignProcessor({
    store: ports,
    logger,
    now,
    pollIntervalMs: config.processing.pollIntervalMs,
    onReady: () => engine.wake(),
    numbering,
    timeZone: config.scheduling.timeZone,
    ...(deps.node === undefined ? {} : { node: deps.node }),
    pricing,
  });
  const campaigns = new CampaignService({ store: ports, logger, now, onQueued: () => processor.wake(), pricing, numbering });
  const app = createApiApp({ ports, auth, campaigns, config, logger: logger.child({ part: 'api' }), ...observer });
  return { engine, processor, campaigns, app };
}
