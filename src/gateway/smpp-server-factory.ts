/**
 * The SMPP server for customers built from a gateway's parts (the default SmppServerFactory):
 * the protocol listener answers binds through the BindGate (accounts, cluster-wide bind limits)
 * and submits through the SubmitIntake (the same engine, credits and rates as the HTTP API); the
 * DeliverySender sends what the engine stored for the customer (receipts, inbound messages) on
 * the account's receiver binds on this node. On SQLite, where one gateway serves the database,
 * its sessions are stamped with a fixed node id; on PostgreSQL with the node's cluster id.
 */
import { BindGate, SESSION_STALE_MS } from '../smpp-server/bind-gate.js';
import { DeliverySender } from '../smpp-server/delivery-sender.js';
import { startSmppListener } from '../smpp-server/protocol/listener.js';
import { LocalSessionsRelay, SmppServer, type SmppListenerLike, type SmppServerStatusStore } from '../smpp-server/smpp-server.js';
import { SubmitIntake } from '../smpp-server/submit-intake.js';
import type { ServerHandlers, ServerSessionView, SmppServerConfig } from '../smpp-server/contracts.js';
import { receiptRetentionMs } from '../smpp-customer/customer-cut.js';
import { isPostgresEngineStore } from '../engine/engine-backend.js';
import { numberingPlanFor } from '../sms/numbering.js';
import type { SmppDeliveryStore } from '../store/smpp-delivery-port.js';
import type { SmppSessionRegistry } from '../store/smpp-account-port.js';
import { PgSmppDeliveryStore } from '../store/postgres/smpp-delivery-store.js';
import { PgSmppIntakeStore } from '../store/postgres/smpp-intake-store.js';
import type { SmppIntakeStore } from '../store/smpp-intake-port.js';
import { SqliteSmppIntakeStore } from '../store/sqlite/smpp-intake-store.js';
import { SqliteSmppDeliveryStore } from '../store/sqlite/smpp-delivery-store.js';
import { asyncPort } from '../store/ports.js';
import type { SmppServerContext, SmppServerHook } from './smpp-server-hook.js';

/** The node id a single gateway's sessions and delivery leases carry (SQLite: one serve per file). */
export const SINGLE_GATEWAY_SMPP_NODE = 'single-gateway';

export function buildSmppServer(context: SmppServerContext): SmppServerHook {
  const { config, engine, logger, now } = context;
  const serverConfig = config.smppServer;
  const nodeId = context.node.nodeId() ?? SINGLE_GATEWAY_SMPP_NODE;
  const store = context.engineStore;
  const deliveries: SmppDeliveryStore = isPostgresEngineStore(store)
    ? new PgSmppDeliveryStore(store.pool)
    : asyncPort(new SqliteSmppDeliveryStore(store.db));
  const intakeStore: SmppIntakeStore = isPostgresEngineStore(store) ? new PgSmppIntakeStore(store.pool) : asyncPort(new SqliteSmppIntakeStore(store.db));
  const bindGate = new BindGate({
    accounts: context.ports.smppAccounts, registry: context.ports.smppSessions, nodeId, now, logger: logger.child({ part: 'binds' }), sessionStaleMs: SESSION_STALE_MS,
  });
  const intake = new SubmitIntake({
    store: intakeStore,
    config: {
      routing: () => engine.currentRouting(),
      // Pricing and numbering as the running config has them (pricing follows a reload).
      get pricing() { return context.runningConfig().pricing; },
      numbering: numberingPlanFor(config.numbering.country),
    },
    now,
    logger: logger.child({ part: 'intake' }),
    wake: (transport) => engine.wakeTransport(transport),
  });
  const sessions = new LocalSessionsRelay();
  const sender = new DeliverySender({
    store: deliveries, sessions, nodeId, now, logger: logger.child({ part: 'deliveries' }), retentionMs: receiptRetentionMs(serverConfig.receiptRetentionHours),
  });
  const handlers: ServerHandlers = {
    bind: (request) => bindGate.bind(request),
    unbound: (session) => bindGate.unbound(session),
    submit: (session, fields) => intake.submit(session, fields),
    query: (session, messageId, sourceAddr) => intake.query(session, messageId, sourceAddr),
    cancel: (session, messageId, sourceAddr, destinationAddr) => intake.cancel(session, messageId, sourceAddr, destinationAddr),
  };
  return new SmppServer({
    config: serverConfig,
    listen: async (): Promise<SmppListenerLike> => listenerLike(await startSmppListener({ config: serverConfig, handlers, logger, nodeId, now })),
    bindGate: {
      start: () => bindGate.start(),
      heartbeat: async (sessionIds) => {
        await bindGate.heartbeat(sessionIds);
      },
    },
    sender,
    sessions,
    statusStore: statusStore(context.ports.smppSessions, deliveries, serverConfig, now),
    sessionStaleMs: SESSION_STALE_MS,
    logger,
  });
}

function listenerLike(listener: Awaited<ReturnType<typeof startSmppListener>>): SmppListenerLike {
  let open = true;
  return {
    receiversOf: (accountId) => listener.receiversOf(accountId),
    accountsWithReceivers: () => listener.accountsWithReceivers(),
    onReceiverBound: (handler) => listener.onReceiverBound(handler),
    views: () => listener.views(),
    submitCounts: () => listener.submitCounts(),
    address: () => (open ? listener.address : undefined),
    close: async () => {
      await listener.close();
      open = false;
    },
  };
}

/** Every node's sessions (from their rows) and what waits per account, for the status reads. */
function statusStore(registry: SmppSessionRegistry, deliveries: SmppDeliveryStore, config: SmppServerConfig, now: () => number): SmppServerStatusStore {
  return {
    clusterSessions: async (): Promise<ServerSessionView[]> =>
      (await registry.listLive(now() - SESSION_STALE_MS)).map((row) => ({
        sessionId: row.id, systemId: row.system_id, bindType: row.bind_type, address: row.address, nodeId: row.node_id, boundAt: row.bound_at,
        windowInUse: null, windowSize: config.windowSize, submitsPerSecond: null,
      })),
    deliveriesWaiting: () => deliveries.waitingBySystemId(),
  };
}
