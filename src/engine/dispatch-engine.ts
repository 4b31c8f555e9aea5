/**
 * The dispatch engine: scheduler (due recipients -> durable parts), one lane per transport
 * (claims, p-queue, submits), group-committed outcomes and receipts, unmatched-receipt expiry,
 * and crash recovery at start. It owns its transports' lifecycle: start() starts them with the
 * engine's handlers, stop() drains and stops them, and a config reload adds, rebinds and drains
 * them while it runs (addTransport, replaceTransport, removeTransport).
 */
import { BackgroundWorker, type PassResult } from '../common/background-worker.js';
import { systemClock, type Clock } from '../common/clock.js';
import { GatewayError } from '../common/errors.js';
import { NOOP_OBSERVER, type GatewayObserver } from '../gateway-observer.js';
import { InboundService } from '../inbound/inbound-service.js';
import type { Logger } from '../common/log.js';
import type { NumberingPlan } from '../sms/index.js';
import type { InboundMessage, Transport, TransportReceipt, TransportState, UndecodablePdu } from '../transports/transport.js';
import { CampaignPlans } from './campaign-plans.js';
import type { EngineConfig } from './config.js';
import { isPostgresEngineStore, type EngineBackend, type EngineStore } from './engine-backend.js';
import { FailureLog } from '../common/failure-log.js';
import type { OutcomeCounts } from './steps/outcomes.js';
import { PgEngineBackend, type PgWriteRetryOptions } from './postgres/backend.js';
import type { DeliveryReceiptSink } from './sqlite/delivery-receipt-sink.js';
import type { RouteConfig } from '../config/types.js';
import { RouteTable } from './routing.js';
import { routeStatus, type RouteStatus } from './route-status.js';
import type { Routing } from './steps/materialise.js';
import { planRerouteScan, queryOf, retriedPartsQuery, type PartReroute } from './steps/reroute.js';
import { expiryCutoffMs } from './steps/unmatched-receipts.js';
import { TransportConditionTracker } from './transport-conditions.js';
import { SqliteEngineBackend } from './sqlite/backend.js';
import { TransportLane } from './transport-lane.js';
import type { WriteBatcherOptions } from './sqlite/write-batcher.js';

export interface DispatchEngineDeps {
  /**
   * A SQLite Store (the default gateway), or `{ kind: 'postgres', pool, node }`: the engine on
   * PostgreSQL, its claims and fenced writes stamped with node.nodeId().
   */
  store: EngineStore;
  transports: readonly Transport[];
  /** The config's route entries (docs/behaviour/routes.md); replaceRoutes swaps them at run time. */
  routes: readonly RouteConfig[];
  /**
   * Whether a transport is up for routing (failover moves parts off one that is not). Default:
   * bound here. A cluster node may also count a transport whose binds its peers hold.
   */
  isTransportUp?: (transport: Transport) => boolean;
  config: EngineConfig;
  logger: Logger;
  deliveryReceipts: DeliveryReceiptSink;
  /** Woken after a commit that stored deliver_sm rows for SMPP customers (src/smpp-server/delivery-sender.ts); none by default. */
  smppDeliveries?: { wake(): void };
  now?: () => number;
  /** The scheduler's and lanes' poll sleeps run on this clock (default: the system clock on `now`). */
  clock?: Clock;
  /** SQLite: group-commit tuning for outcomes and receipts (defaults: WRITE_BATCH_DEFAULTS). */
  writeBatch?: WriteBatcherOptions;
  /** PostgreSQL: backoff of outcome and receipt units the database refused for a passing reason (defaults: PG_WRITE_RETRY_DEFAULTS). */
  pgWriteRetry?: PgWriteRetryOptions;
  /** Metrics hooks (src/admin); none by default. */
  observer?: GatewayObserver;
  /** Stores, reassembles and routes mobile-originated messages (default: one on this store, 10-minute reassembly). */
  inbound?: InboundService;
  /** The numbering plan the default InboundService normalises From/To with (config `numbering.country`; default Ireland's). */
  numbering?: NumberingPlan;
}

export interface EngineStats {
  recipientsDispatched: number;
  submits: number;
  outcomes: OutcomeCounts;
  receiptsMatched: number;
  /** Receipts stored unmatched (their part had no message id yet); the name stays for the stats' readers. */
  receiptsParked: number;
  /** Group commits of outcomes and receipts (PostgreSQL: committed units). */
  commits: number;
  /** Commits the store refused for a passing reason (disk full, I/O error, a dropped connection); each was retried. */
  failedCommits: number;
  /** True while such a batch waits for its retry (no new parts are claimed meanwhile). */
  writesStalled: boolean;
  /**
   * PostgreSQL: outcome writes refused because the part was no longer this node's claim (its
   * claims were reaped while it stalled); they changed nothing. Always 0 on SQLite.
   */
  fencedWrites: number;
}

/** Queued parts are rerouted at least this often (and at once when a transport changes state or the routes are replaced). */
export const REROUTE_INTERVAL_MS = 1_000;
/** Queued parts read per reroute transaction. */
const REROUTE_BATCH = 1_000;

/** Expiry of unmatched receipts runs at most this often (and at least every tenth of the TTL). */
const MAX_EXPIRY_INTERVAL_MS = 60_000;

export class DispatchEngine {
  private readonly backend: EngineBackend;
  private readonly lanes: Map<string, TransportLane>;
  private readonly schedulerWorker: BackgroundWorker;
  private readonly schedulerFailures: FailureLog;
  /** The transports running now, by name: a reload adds, replaces and removes them (addTransport and below). */
  private readonly transports: Map<string, Transport>;
  private readonly plans: CampaignPlans;
  private readonly clock: Clock;
  /** Submits counted by lanes a reload retired (stats().submits only grows). */
  private retiredSubmits = 0;
  private started = false;
  private readonly rerouteWorker: BackgroundWorker;
  private readonly rerouteFailures: FailureLog;
  private readonly conditions: TransportConditionTracker;
  /** The routes materialise and reroute use (replaceRoutes swaps it). */
  private routes: RouteTable;
  /** What the routes chose at the last complete reroute scan (routingSignature); undefined: none yet, or the routes were replaced. */
  private rerouteSignature: string | undefined;
  /** Reroutes of requeued parts still running (rerouteRequeued): a stop waits for them. */
  private readonly requeueReroutes = new Set<Promise<void>>();
  private readonly now: () => number;
  private readonly observer: GatewayObserver;
  private readonly expiryIntervalMs: number;
  private readonly inbound: InboundService;
  private stopping: Promise<void> | undefined;
  private lastExpiryAt = 0;
  private recipientsDispatched = 0;

  constructor(private readonly deps: DispatchEngineDeps) {
    const { store, transports, config, logger } = deps;
    const clock = deps.clock ?? systemClock(deps.now);
    this.now = deps.now ?? (() => clock.now());
    this.observer = deps.observer ?? NOOP_OBSERVER;
    this.schedulerFailures = new FailureLog(logger, 'scheduler pass');
    const plans = new CampaignPlans();
    this.plans = plans;
    this.clock = clock;
    this.transports = new Map(transports.map((t) => [t.name, t]));
    this.routes = new RouteTable(deps.routes);
    const isUp = deps.isTransportUp ?? ((t: Transport): boolean => t.currentState().state === 'bound');
    // The running transports as a reload leaves them, not the ones the engine started with.
    this.conditions = new TransportConditionTracker({ [Symbol.iterator]: () => this.transports.values() }, isUp, this.now());
    const routing = (): Routing => this.routing(this.now());
    const common = { config, logger, deliveryReceipts: deps.deliveryReceipts, routing, plans, now: this.now, ...(deps.smppDeliveries === undefined ? {} : { smppDeliveries: deps.smppDeliveries }) };
    this.backend = isPostgresEngineStore(store)
      ? new PgEngineBackend({ ...common, pool: store.pool, node: store.node, ...(deps.pgWriteRetry === undefined ? {} : { retry: deps.pgWriteRetry }) })
      : new SqliteEngineBackend({ ...common, store, onCommitTimed: (seconds) => this.observer.dbCommit(seconds), ...(deps.writeBatch === undefined ? {} : { writeBatch: deps.writeBatch }) });
    this.lanes = new Map(transports.map((transport) => [transport.name, this.laneFor(transport)]));
    if (this.lanes.size !== transports.length) throw new GatewayError('CONFIG_INVALID', 'transport names must be unique');
    this.expiryIntervalMs = Math.min(MAX_EXPIRY_INTERVAL_MS, Math.max(10, Math.floor(config.unmatchedReceiptTtlMs / 10)));
    this.schedulerWorker = new BackgroundWorker({ clock, intervalMs: config.pollIntervalMs, pass: () => this.schedulePass(), onError: (err) => this.schedulerFailures.failed(err) });
    this.rerouteFailures = new FailureLog(logger, 'rerouting queued parts');
    this.rerouteWorker = new BackgroundWorker({ clock, intervalMs: REROUTE_INTERVAL_MS, pass: () => this.reroutePass(), onError: (err) => this.rerouteFailures.failed(err) });
    this.inbound = deps.inbound ?? new InboundService({ store: this.backend.inbound, logger: logger.child({ part: 'inbound' }), now: this.now, observer: this.observer, wakeWebhooks: () => deps.deliveryReceipts.wake(), wakeSmppDeliveries: () => deps.smppDeliveries?.wake(), ...(config.receiptRetentionHours === undefined ? {} : { smppRetentionHours: config.receiptRetentionHours }), ...(deps.numbering === undefined ? {} : { numbering: deps.numbering }) });
  }

  /**
   * Recovers from a crash, starts the transports and the loops. Parts left 'submitting' by a crash
   * go back to 'queued' and are sent again (at-least-once: duplicates are at most the submits that
   * were in flight), recipients marked dispatched without parts are reopened. On PostgreSQL only a
   * single gateway's parts (no node id) are requeued here: a cluster's are the reaper's (pg/backend.ts).
   */
  async start(): Promise<void> {
    const { logger } = this.deps;
    const transports = [...this.transports.values()];
    const { requeued, reopened } = await this.backend.recover(this.now());
    if (requeued > 0 || reopened > 0) logger.warn({ requeued, reopened }, 'recovered work left by an unclean stop: in-flight parts will be sent again');
    for (const transport of transports) this.setHandlersOf(transport);
    // Parts left by the last run that are overdue become (incomplete) messages before new ones arrive.
    await this.inbound.start();
    await Promise.all(transports.map((t) => t.start()));
    for (const transport of transports) await this.recoverTransportReceipts(transport);
    for (const lane of this.lanes.values()) lane.start();
    this.schedulerWorker.start();
    this.rerouteWorker.start();
    this.started = true;
  }

  /** The transports the engine runs now (a reload changes them). */
  currentTransports(): Transport[] {
    return [...this.transports.values()];
  }

  /**
   * Starts a transport a reload added, with its lane, beside the running ones; routes may name it
   * from now on. Its name must be new (replaceTransport for one that is running).
   */
  async addTransport(transport: Transport): Promise<void> {
    if (this.transports.has(transport.name)) throw new GatewayError('CONFIG_INVALID', `transport '${transport.name}' is already running`);
    await this.startTransport(transport);
    this.rerouteWorker.wake();
  }

  /**
   * Rebinds a transport whose settings changed: the running one drains (drainTransport) and
   * stops gracefully, then `next` (same name) starts with its own lane. Its parts stay queued
   * meanwhile: they are the new one's to send.
   */
  async replaceTransport(next: Transport): Promise<void> {
    if (!this.transports.has(next.name)) throw new GatewayError('CONFIG_INVALID', `transport '${next.name}' is not running`);
    await this.drainTransport(next.name);
    await this.startTransport(next);
  }

  /**
   * Drains and stops a transport a reload removed. Routes no longer name it (a validated config
   * names only configured transports); parts already queued for it stay queued, waiting for a
   * transport of that name to run again (ARCHITECTURE "nothing accepted is lost").
   */
  async removeTransport(name: string): Promise<void> {
    if (!this.transports.has(name)) return;
    await this.drainTransport(name);
  }

  /**
   * Swaps the route table: parts materialised from now on follow the new routes, and parts queued
   * but not yet submitted are rerouted at once (submitted ones stay where they went: their
   * receipts are matched on that transport).
   */
  replaceRoutes(routes: readonly RouteConfig[]): void {
    this.routes = new RouteTable(routes);
    this.rerouteSignature = undefined;
    this.rerouteWorker.wake();
  }

  /** Per route, its transports and the one its parts go to now (the status page). */
  routeStatus(): RouteStatus[] {
    const nowMs = this.now();
    return routeStatus(this.routes, this.conditions.snapshot(nowMs), nowMs);
  }

  /** New work may be due (a campaign became ready): look now instead of at the next poll. */
  wake(): void {
    this.schedulerWorker.wake();
  }

  /**
   * Parts were queued on this transport outside materialise (an SMPP customer's submit_sm stored
   * ready to send): its lane claims now instead of at its next poll.
   */
  wakeTransport(name: string): void {
    this.lanes.get(name)?.wake();
  }

  /** The route table and the transports' conditions now, as materialise routes a recipient (the SMPP intake routes a submit_sm by it). */
  currentRouting(): Routing {
    return this.routing(this.now());
  }

  stats(): EngineStats {
    const backend = this.backend.stats();
    return {
      recipientsDispatched: this.recipientsDispatched,
      submits: [...this.lanes.values()].reduce((sum, lane) => sum + lane.submits, this.retiredSubmits),
      outcomes: backend.outcomes,
      receiptsMatched: backend.receiptsMatched,
      receiptsParked: backend.receiptsUnmatched,
      commits: backend.commits,
      failedCommits: backend.failedCommits,
      writesStalled: this.backend.stalled,
      fencedWrites: backend.fencedWrites,
    };
  }

  /**
   * Marks unmatched receipts older than engine.unmatchedReceiptTtlMs expired (also runs
   * periodically); unmatched receipts whose part exists by now are applied first.
   */
  expireUnmatchedReceipts(): Promise<number> {
    // The cutoff is fixed when the sweep is asked for, not when its expiring statement runs: a sweep
    // queued behind other writes must not expire receipts that were younger than the TTL when it began.
    const now = this.now();
    this.lastExpiryAt = now;
    return this.backend.sweepReceipts(expiryCutoffMs(now, this.deps.config.unmatchedReceiptTtlMs));
  }

  /**
   * Clean stop: no new claims, submits not yet started are dropped from memory (their parts go back
   * to 'queued'), in-flight submits get up to engine.drainTimeoutMs, transports stop, state is flushed.
   */
  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private async stopOnce(): Promise<void> {
    const { config, logger } = this.deps;
    const transports = [...this.transports.values()];
    await this.schedulerWorker.stop();
    await this.rerouteWorker.stop();
    this.backend.beginStop();
    // Reroutes of requeued parts started before the stop finish before the store is closed.
    await Promise.all(this.requeueReroutes);
    const lanes = [...this.lanes.values()];
    await Promise.all(lanes.map((lane) => lane.stopFeeding()));
    await Promise.all(transports.map((t) => t.stop(config.drainTimeoutMs)));
    const drained = await settleWithin(Promise.all(lanes.map((lane) => lane.onIdle())), config.drainTimeoutMs);
    if (!drained) logger.warn({ drainTimeoutMs: config.drainTimeoutMs }, 'submits still unanswered after the drain timeout: their parts will be sent again');
    this.inbound.stop();
    // One last attempt for writes still queued; what cannot commit is dropped, its parts requeued.
    try {
      const requeued = await this.backend.finishStop(this.now());
      logger.info({ requeued }, 'dispatch engine stopped');
    } catch (err) {
      logger.error({ err }, 'dispatch engine stopped; parts in flight could not be requeued now and will be at the next start');
    }
  }

  /**
   * A transport that keeps pending receipts in memory (the simulator) lost them with the last run
   * if it crashed or stopped early: hand it the ids of its parts still waiting for a final receipt.
   */
  private async recoverTransportReceipts(transport: Transport): Promise<void> {
    if (transport.recoverReceipts === undefined) return;
    const messageIds = await this.backend.messageIdsAwaitingReceipt(transport.name);
    if (messageIds.length === 0) return;
    const reissued = transport.recoverReceipts(messageIds);
    this.deps.logger.info({ transport: transport.name, awaiting: messageIds.length, reissued }, 'transport re-issues receipts of parts submitted before the last stop');
  }

  private laneFor(transport: Transport): TransportLane {
    const { config, logger } = this.deps;
    return new TransportLane({ transport, backend: this.backend, plans: this.plans, config, logger: logger.child({ transport: transport.name }), now: this.now, observer: this.observer, clock: this.clock, onRequeued: (ids, afterFailure) => this.rerouteRequeued(ids, afterFailure) });
  }

  private setHandlersOf(transport: Transport): void {
    transport.setHandlers({
      onReceipt: (receipt: TransportReceipt) => {
        this.observer.receiptReceived(transport.name, receipt);
        return this.backend.acceptReceipt(transport.name, receipt);
      },
      onInbound: async (message: InboundMessage) => {
        await this.inbound.receive(transport.name, message);
      },
      onUndecodable: async (pdu: UndecodablePdu) => this.storeUndecodable(transport.name, pdu),
      isSubmittedMessageId: (messageId: string) => this.backend.isSubmittedMessageId(transport.name, messageId),
      onState: (state: TransportState) => this.onTransportState(transport.name, state),
    });
  }

  /** A transport added while the engine runs: handlers, start, receipts it lost, then its lane. */
  private async startTransport(transport: Transport): Promise<void> {
    if (this.stopping !== undefined) throw new GatewayError('CONFIG_INVALID', 'the engine is stopping: no transport starts');
    const lane = this.laneFor(transport);
    this.transports.set(transport.name, transport);
    this.lanes.set(transport.name, lane);
    this.setHandlersOf(transport);
    if (!this.started) return;
    await transport.start();
    await this.recoverTransportReceipts(transport);
    lane.start();
  }

  /**
   * Stops claiming for the transport, lets the submits it started finish (those claimed but not
   * started go back to 'queued' unsent: TransportLane.drain), then stops the transport gracefully
   * (in-flight responses awaited up to engine.drainTimeoutMs, then SMPP unbind).
   */
  private async drainTransport(name: string): Promise<void> {
    const { config, logger } = this.deps;
    const lane = this.lanes.get(name);
    const transport = this.transports.get(name);
    this.lanes.delete(name);
    this.transports.delete(name);
    if (lane !== undefined) {
      const drained = await lane.drain(config.drainTimeoutMs);
      if (!drained) logger.warn({ transport: name, drainTimeoutMs: config.drainTimeoutMs }, 'submits still unanswered after the drain timeout: the transport stops, their parts will be sent again');
      this.retiredSubmits += lane.submits;
    }
    await transport?.stop(config.drainTimeoutMs);
    if (lane !== undefined) await settleWithin(lane.onIdle(), config.drainTimeoutMs);
    logger.info({ transport: name }, 'transport drained and stopped');
  }

  /** Recorded before the modem deletes it from the SIM. */
  private async storeUndecodable(transport: string, pdu: UndecodablePdu): Promise<void> {
    const receivedAtMs = Date.parse(pdu.receivedAt);
    await this.backend.undecodable.insert({ transport, device: pdu.device, hex: pdu.hex, reasonCode: pdu.reasonCode, reason: pdu.reason, receivedAtMs: Number.isNaN(receivedAtMs) ? this.now() : receivedAtMs });
    this.deps.logger.warn({ transport, device: pdu.device, reasonCode: pdu.reasonCode }, 'undecodable PDU stored in undecodable_pdus');
  }

  private onTransportState(name: string, state: TransportState): void {
    this.observer.transportState(name, state, this.now());
    this.deps.logger.info({ transport: name, state: state.state, reason: state.state === 'down' ? state.reason : undefined }, 'transport state');
    this.conditions.observe(name, state, this.now());
    if (state.state === 'bound') this.lanes.get(name)?.wake();
    this.rerouteWorker.wake();
  }

  /** The route table and the transports' states at `nowMs`, for one pass. */
  private routing(nowMs: number): Routing {
    return { routes: this.routes, conditions: this.conditions.snapshot(nowMs) };
  }

  /**
   * One reroute pass (steps/reroute.ts): queued parts follow their routes as they choose now,
   * in batches of REROUTE_BATCH, each one transaction. A full scan's signature is kept only once
   * it completed, so a pass that failed midway is run again.
   */
  private async reroutePass(): Promise<PassResult> {
    const nowMs = this.now();
    const routing = this.routing(nowMs);
    const { scan, signature } = planRerouteScan(routing, nowMs, this.rerouteSignature);
    if (scan.kind === 'none') return 'idle';
    let afterId = 0;
    for (;;) {
      const batch = await this.backend.rerouteBatch(queryOf(scan, afterId, REROUTE_BATCH, nowMs), routing, nowMs);
      this.noteReroutes(batch.applied);
      if (batch.read < REROUTE_BATCH) break;
      afterId = batch.lastId;
    }
    if (scan.kind === 'all' && routing.routes === this.routes) this.rerouteSignature = signature;
    this.rerouteFailures.recovered();
    return 'idle';
  }

  /**
   * Parts a lane just sent back to the queue. After a temporary failure their route may retry them
   * on its next usable transport (planReroute afterFailure); unsent ones (their transport went down
   * under them) follow the route as it chooses now: a reroute scan that ran while they were in
   * flight did not see them. A part claimed again meanwhile, or ended, is not queued there any
   * more and is left alone by the guarded write.
   */
  private rerouteRequeued(partIds: number[], afterFailure: boolean): void {
    if (this.stopping !== undefined) return;
    const nowMs = this.now();
    const running = this.backend.rerouteBatch(retriedPartsQuery(partIds), this.routing(nowMs), nowMs, afterFailure).then(
      (batch) => this.noteReroutes(batch.applied),
      (err: unknown) => this.rerouteFailures.failed(err),
    );
    this.requeueReroutes.add(running);
    void running.finally(() => this.requeueReroutes.delete(running));
  }

  /** Counts and logs the parts a reroute batch moved, and wakes the lanes they moved to. */
  private noteReroutes(applied: readonly PartReroute[]): void {
    const moves = new Map<string, { route: string; from: string; to: string; parts: number }>();
    for (const change of applied) {
      if (change.from === change.to) continue;
      const key = `${change.route}\u0000${change.from}\u0000${change.to}`;
      const entry = moves.get(key);
      if (entry === undefined) moves.set(key, { route: change.route, from: change.from, to: change.to, parts: 1 });
      else entry.parts++;
    }
    for (const move of moves.values()) {
      this.observer.routeFailover?.(move.route, move.from, move.to, move.parts);
      this.deps.logger.info(move, 'queued parts moved to another transport of their route');
      this.lanes.get(move.to)?.wake();
    }
  }

  /** One scheduler pass; 'more' when a full batch was dispatched (more may be due at once). */
  private async schedulePass(): Promise<PassResult> {
    const { config } = this.deps;
    const result = await this.backend.materializeDue(this.now(), config.batchSize);
    const dispatched = result.recipients;
    this.recipientsDispatched += dispatched;
    for (const name of result.queuedByTransport.keys()) this.lanes.get(name)?.wake();
    if (result.webhooksEnqueued) this.deps.deliveryReceipts.wake();
    if (this.now() - this.lastExpiryAt >= this.expiryIntervalMs) await this.expireUnmatchedReceipts();
    this.schedulerFailures.recovered();
    return dispatched >= config.batchSize ? 'more' : 'idle';
  }
}

async function settleWithin(promise: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
