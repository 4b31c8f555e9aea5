/**
 * The dispatch engine: scheduler (due recipients -> durable parts), one lane per transport
 * (claims, p-queue, submits), group-committed outcomes and receipts, unmatched-receipt expiry,
 * and crash recovery at start. It owns its transports' lifecycle: start() starts them with the
 * engine's handlers, stop() drains and stops them.
 */
import { BackgroundWorker, type PassResult } from '../background-worker.js';
import { systemClock, type Clock } from '../clock.js';
import { GatewayError } from '../errors.js';
import { NOOP_OBSERVER, type GatewayObserver } from '../gateway-observer.js';
import { InboundService } from '../inbound/inbound-service.js';
import type { Logger } from '../log.js';
import type { NumberingPlan } from '../sms/index.js';
import type { Store } from '../store/database.js';
import { DispatchStore } from '../store/dispatch-store.js';
import { InboundStore } from '../store/inbound-store.js';
import { asyncPort } from '../store/ports.js';
import { UndecodablePduStore } from '../store/undecodable-pdu-store.js';
import type { InboundMessage, Transport, TransportReceipt, TransportState, UndecodablePdu } from '../transports/transport.js';
import { CampaignPlans } from './campaign-plans.js';
import type { EngineConfig } from './config.js';
import { FailureLog } from './failure-log.js';
import { OutcomeWriter, type OutcomeCounts } from './outcome-writer.js';
import { ReceiptApplier } from './receipt-applier.js';
import { RecipientUpdates, type DeliveryReceiptSink } from './recipient-updates.js';
import { RouteTable, type Route } from './routing.js';
import { Scheduler } from './scheduler.js';
import { TransportLane } from './transport-lane.js';
import { WriteBatcher, type WriteBatcherOptions } from './write-batcher.js';

export interface DispatchEngineDeps {
  store: Store;
  transports: readonly Transport[];
  routes: readonly Route[];
  config: EngineConfig;
  logger: Logger;
  deliveryReceipts: DeliveryReceiptSink;
  now?: () => number;
  /** The scheduler's and lanes' poll sleeps run on this clock (default: the system clock on `now`). */
  clock?: Clock;
  /** Group-commit tuning for outcomes and receipts (defaults: WRITE_BATCH_DEFAULTS). */
  writeBatch?: WriteBatcherOptions;
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
  receiptsParked: number;
  /** Group commits of outcomes and receipts. */
  commits: number;
  /** Group commits the store refused for a passing reason (disk full, I/O error); each was retried. */
  failedCommits: number;
  /** True while such a batch waits for its retry (no new parts are claimed meanwhile). */
  writesStalled: boolean;
}

/** Expiry of unmatched receipts runs at most this often (and at least every tenth of the TTL). */
const MAX_EXPIRY_INTERVAL_MS = 60_000;

export class DispatchEngine {
  private readonly dispatchStore: DispatchStore;
  private readonly undecodable: UndecodablePduStore;
  private readonly scheduler: Scheduler;
  private readonly lanes: Map<string, TransportLane>;
  private readonly receipts: ReceiptApplier;
  private readonly outcomes: OutcomeWriter;
  private readonly batcher: WriteBatcher;
  private readonly schedulerWorker: BackgroundWorker;
  private readonly schedulerFailures: FailureLog;
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
    this.dispatchStore = new DispatchStore(store.db);
    this.undecodable = new UndecodablePduStore(store.db);
    this.batcher = new WriteBatcher(store.db, { logger, ...deps.writeBatch });
    this.schedulerFailures = new FailureLog(logger, 'scheduler pass');
    this.batcher.onCommitTimed((seconds) => this.observer.dbCommit(seconds));
    // Webhooks enqueued inside a batch are announced to the sender once the batch committed.
    let webhooksEnqueued = false;
    const noteWebhook = (): void => {
      webhooksEnqueued = true;
    };
    this.batcher.onCommit(() => {
      if (!webhooksEnqueued) return;
      webhooksEnqueued = false;
      deps.deliveryReceipts.wake();
    });
    const recipients = new RecipientUpdates(this.dispatchStore, deps.deliveryReceipts, logger);
    const plans = new CampaignPlans();
    this.receipts = new ReceiptApplier(this.batcher, this.dispatchStore, recipients, noteWebhook, logger, this.now);
    this.outcomes = new OutcomeWriter(this.batcher, this.dispatchStore, this.receipts, recipients, noteWebhook, config, logger, this.now);
    this.lanes = new Map(
      transports.map((transport) => [
        transport.name,
        new TransportLane({ transport, store: this.dispatchStore, plans, outcomes: this.outcomes, config, logger: logger.child({ transport: transport.name }), now: this.now, observer: this.observer, clock }),
      ]),
    );
    if (this.lanes.size !== transports.length) throw new GatewayError('CONFIG_INVALID', 'transport names must be unique');
    this.scheduler = new Scheduler(this.dispatchStore, new RouteTable(deps.routes), new Set(this.lanes.keys()), plans, recipients, logger);
    this.expiryIntervalMs = Math.min(MAX_EXPIRY_INTERVAL_MS, Math.max(10, Math.floor(config.unmatchedReceiptTtlMs / 10)));
    this.schedulerWorker = new BackgroundWorker({ clock, intervalMs: config.pollIntervalMs, pass: () => this.schedulePass(), onError: (err) => this.schedulerFailures.failed(err) });
    this.inbound = deps.inbound ?? new InboundService({ store: asyncPort(new InboundStore(store.db)), logger: logger.child({ part: 'inbound' }), now: this.now, wakeWebhooks: () => deps.deliveryReceipts.wake(), ...(deps.numbering === undefined ? {} : { numbering: deps.numbering }) });
  }

  /**
   * Recovers from a crash, starts the transports and the loops. Parts left 'submitting' by a crash
   * go back to 'queued' and are sent again (at-least-once: duplicates are at most the submits that
   * were in flight), recipients marked dispatched without parts are reopened.
   */
  async start(): Promise<void> {
    const { logger, transports } = this.deps;
    const nowMs = this.now();
    const { requeued, reopened } = this.deps.store.db.transaction(() => ({
      requeued: this.dispatchStore.requeueAllSubmitting(nowMs),
      reopened: this.dispatchStore.reopenOrphanedRecipients(),
    }))();
    if (requeued > 0 || reopened > 0) logger.warn({ requeued, reopened }, 'recovered work left by an unclean stop: in-flight parts will be sent again');
    for (const transport of transports) {
      transport.setHandlers({
        onReceipt: (receipt: TransportReceipt) => {
          this.observer.receiptReceived(transport.name, receipt.status);
          return this.receipts.accept(transport.name, receipt);
        },
        onInbound: async (message: InboundMessage) => {
          await this.inbound.receive(transport.name, message);
        },
        onUndecodable: async (pdu: UndecodablePdu) => this.storeUndecodable(transport.name, pdu),
        isSubmittedMessageId: async (messageId: string) => this.dispatchStore.partByMessageId(transport.name, messageId) !== undefined,
        onState: (state: TransportState) => this.onTransportState(transport.name, state),
      });
    }
    // Parts left by the last run that are overdue become (incomplete) messages before new ones arrive.
    await this.inbound.start();
    await Promise.all(transports.map((t) => t.start()));
    this.recoverTransportReceipts();
    for (const lane of this.lanes.values()) lane.start();
    this.schedulerWorker.start();
  }

  /** New work may be due (a campaign became ready): look now instead of at the next poll. */
  wake(): void {
    this.schedulerWorker.wake();
  }

  stats(): EngineStats {
    return {
      recipientsDispatched: this.recipientsDispatched,
      submits: [...this.lanes.values()].reduce((sum, lane) => sum + lane.submits, 0),
      outcomes: { ...this.outcomes.counts },
      receiptsMatched: this.receipts.matched,
      receiptsParked: this.receipts.parked,
      commits: this.batcher.commits,
      failedCommits: this.batcher.failedCommits,
      writesStalled: this.batcher.stalled,
    };
  }

  /** Marks unmatched receipts older than engine.unmatchedReceiptTtlMs expired (also runs periodically). */
  expireUnmatchedReceipts(): number {
    this.lastExpiryAt = this.now();
    return this.receipts.expireUnmatched(this.deps.config.unmatchedReceiptTtlMs).length;
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
    const { transports, config, logger } = this.deps;
    await this.schedulerWorker.stop();
    this.outcomes.stopping = true;
    const lanes = [...this.lanes.values()];
    await Promise.all(lanes.map((lane) => lane.stopFeeding()));
    await Promise.all(transports.map((t) => t.stop(config.drainTimeoutMs)));
    const drained = await settleWithin(Promise.all(lanes.map((lane) => lane.onIdle())), config.drainTimeoutMs);
    if (!drained) logger.warn({ drainTimeoutMs: config.drainTimeoutMs }, 'submits still unanswered after the drain timeout: their parts will be sent again');
    this.inbound.stop();
    // One last attempt for writes still queued (e.g. the store refused them until now); whatever
    // it cannot commit is dropped, and its parts, still 'submitting', are requeued at the next start.
    this.batcher.flush();
    this.batcher.close();
    try {
      const requeued = this.dispatchStore.requeueAllSubmitting(this.now());
      logger.info({ requeued }, 'dispatch engine stopped');
    } catch (err) {
      logger.error({ err }, 'dispatch engine stopped; parts in flight could not be requeued now and will be at the next start');
    }
  }

  /**
   * A transport that keeps pending receipts in memory (the simulator) lost them with the last run
   * if it crashed or stopped early: hand it the ids of its parts still waiting for a final receipt.
   */
  private recoverTransportReceipts(): void {
    for (const transport of this.deps.transports) {
      if (transport.recoverReceipts === undefined) continue;
      const messageIds = this.dispatchStore.messageIdsAwaitingReceipt(transport.name);
      if (messageIds.length === 0) continue;
      const reissued = transport.recoverReceipts(messageIds);
      this.deps.logger.info({ transport: transport.name, awaiting: messageIds.length, reissued }, 'transport re-issues receipts of parts submitted before the last stop');
    }
  }

  /** Issue 9 item 6 d: recorded before the modem deletes it from the SIM. */
  private storeUndecodable(transport: string, pdu: UndecodablePdu): void {
    const receivedAtMs = Date.parse(pdu.receivedAt);
    this.undecodable.insert({ transport, device: pdu.device, hex: pdu.hex, reasonCode: pdu.reasonCode, reason: pdu.reason, receivedAtMs: Number.isNaN(receivedAtMs) ? this.now() : receivedAtMs });
    this.deps.logger.warn({ transport, device: pdu.device, reasonCode: pdu.reasonCode }, 'undecodable PDU stored in undecodable_pdus');
  }

  private onTransportState(name: string, state: TransportState): void {
    this.observer.transportState(name, state, this.now());
    this.deps.logger.info({ transport: name, state: state.state, reason: state.state === 'down' ? state.reason : undefined }, 'transport state');
    if (state.state === 'bound') this.lanes.get(name)?.wake();
  }

  /** One scheduler pass; 'more' when a full batch was dispatched (more may be due at once). */
  private schedulePass(): PassResult {
    const { config } = this.deps;
    const result = this.scheduler.materializeDue(this.now(), config.batchSize);
    const dispatched = result.recipients;
    this.recipientsDispatched += dispatched;
    for (const name of result.queuedByTransport.keys()) this.lanes.get(name)?.wake();
    if (result.webhooksEnqueued) this.deps.deliveryReceipts.wake();
    if (this.now() - this.lastExpiryAt >= this.expiryIntervalMs) this.expireUnmatchedReceipts();
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
