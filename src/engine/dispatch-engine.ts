/**
 * The dispatch engine: scheduler (due recipients -> durable parts), one lane per transport
 * (claims, p-queue, submits), group-committed outcomes and receipts, unmatched-receipt expiry,
 * and crash recovery at start. It owns its transports' lifecycle: start() starts them with the
 * engine's handlers, stop() drains and stops them.
 */
import { GatewayError } from '../errors.js';
import { InboundService } from '../inbound/inbound-service.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/database.js';
import { DispatchStore } from '../store/dispatch-store.js';
import type { InboundMessage, Transport, TransportReceipt, TransportState } from '../transports/transport.js';
import { CampaignPlans } from './campaign-plans.js';
import type { EngineConfig } from './config.js';
import { OutcomeWriter, type OutcomeCounts } from './outcome-writer.js';
import { ReceiptApplier } from './receipt-applier.js';
import { RecipientUpdates, type DeliveryReceiptSink } from './recipient-updates.js';
import { RouteTable, type Route } from './routing.js';
import { Scheduler } from './scheduler.js';
import { TransportLane } from './transport-lane.js';
import { WakeSignal } from './wake-signal.js';
import { WriteBatcher, type WriteBatcherOptions } from './write-batcher.js';

export interface DispatchEngineDeps {
  store: Store;
  transports: readonly Transport[];
  routes: readonly Route[];
  config: EngineConfig;
  logger: Logger;
  deliveryReceipts: DeliveryReceiptSink;
  now?: () => number;
  /** Group-commit tuning for outcomes and receipts (defaults: WRITE_BATCH_DEFAULTS). */
  writeBatch?: WriteBatcherOptions;
  /** Stores, reassembles and routes mobile-originated messages (default: one on this store, 10-minute reassembly). */
  inbound?: InboundService;
}

export interface EngineStats {
  recipientsDispatched: number;
  submits: number;
  outcomes: OutcomeCounts;
  receiptsMatched: number;
  receiptsParked: number;
  /** Group commits of outcomes and receipts. */
  commits: number;
}

/** Expiry of unmatched receipts runs at most this often (and at least every tenth of the TTL). */
const MAX_EXPIRY_INTERVAL_MS = 60_000;

export class DispatchEngine {
  private readonly dispatchStore: DispatchStore;
  private readonly scheduler: Scheduler;
  private readonly lanes: Map<string, TransportLane>;
  private readonly receipts: ReceiptApplier;
  private readonly outcomes: OutcomeWriter;
  private readonly batcher: WriteBatcher;
  private readonly signal = new WakeSignal();
  private readonly now: () => number;
  private readonly expiryIntervalMs: number;
  private readonly inbound: InboundService;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private stopping: Promise<void> | undefined;
  private lastExpiryAt = 0;
  private recipientsDispatched = 0;

  constructor(private readonly deps: DispatchEngineDeps) {
    const { store, transports, config, logger } = deps;
    this.now = deps.now ?? Date.now;
    this.dispatchStore = new DispatchStore(store.db);
    this.batcher = new WriteBatcher(store.db, deps.writeBatch);
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
        new TransportLane({ transport, store: this.dispatchStore, plans, outcomes: this.outcomes, config, logger: logger.child({ transport: transport.name }), now: this.now }),
      ]),
    );
    if (this.lanes.size !== transports.length) throw new GatewayError('CONFIG_INVALID', 'transport names must be unique');
    this.scheduler = new Scheduler(this.dispatchStore, new RouteTable(deps.routes), new Set(this.lanes.keys()), plans, recipients, logger);
    this.expiryIntervalMs = Math.min(MAX_EXPIRY_INTERVAL_MS, Math.max(10, Math.floor(config.unmatchedReceiptTtlMs / 10)));
    this.inbound = deps.inbound ?? new InboundService({ db: store.db, logger: logger.child({ part: 'inbound' }), now: this.now, wakeWebhooks: () => deps.deliveryReceipts.wake() });
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
        onReceipt: (receipt: TransportReceipt) => this.receipts.accept(transport.name, receipt),
        onInbound: async (message: InboundMessage) => {
          this.inbound.receive(transport.name, message);
        },
        onState: (state: TransportState) => this.onTransportState(transport.name, state),
      });
    }
    // Parts left by the last run that are overdue become (incomplete) messages before new ones arrive.
    this.inbound.start();
    await Promise.all(transports.map((t) => t.start()));
    this.recoverTransportReceipts();
    for (const lane of this.lanes.values()) lane.start();
    this.loop = this.schedule();
  }

  /** New work may be due (a campaign became ready): look now instead of at the next poll. */
  wake(): void {
    this.signal.wake();
  }

  stats(): EngineStats {
    return {
      recipientsDispatched: this.recipientsDispatched,
      submits: [...this.lanes.values()].reduce((sum, lane) => sum + lane.submits, 0),
      outcomes: { ...this.outcomes.counts },
      receiptsMatched: this.receipts.matched,
      receiptsParked: this.receipts.parked,
      commits: this.batcher.commits,
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
    this.stopped = true;
    this.signal.wake();
    await this.loop;
    this.outcomes.stopping = true;
    const lanes = [...this.lanes.values()];
    await Promise.all(lanes.map((lane) => lane.stopFeeding()));
    await Promise.all(transports.map((t) => t.stop(config.drainTimeoutMs)));
    const drained = await settleWithin(Promise.all(lanes.map((lane) => lane.onIdle())), config.drainTimeoutMs);
    if (!drained) logger.warn({ drainTimeoutMs: config.drainTimeoutMs }, 'submits still unanswered after the drain timeout: their parts will be sent again');
    this.inbound.stop();
    this.batcher.flush();
    const requeued = this.dispatchStore.requeueAllSubmitting(this.now());
    logger.info({ requeued }, 'dispatch engine stopped');
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

  private onTransportState(name: string, state: TransportState): void {
    this.deps.logger.info({ transport: name, state: state.state, reason: state.state === 'down' ? state.reason : undefined }, 'transport state');
    if (state.state === 'bound') this.lanes.get(name)?.wake();
  }

  private async schedule(): Promise<void> {
    const { config, logger } = this.deps;
    while (!this.stopped) {
      let dispatched = 0;
      try {
        const result = this.scheduler.materializeDue(this.now(), config.batchSize);
        dispatched = result.recipients;
        this.recipientsDispatched += dispatched;
        for (const name of result.queuedByTransport.keys()) this.lanes.get(name)?.wake();
        if (result.webhooksEnqueued) this.deps.deliveryReceipts.wake();
        if (this.now() - this.lastExpiryAt >= this.expiryIntervalMs) this.expireUnmatchedReceipts();
      } catch (err) {
        logger.error({ err }, 'scheduler pass failed; retrying after the poll interval');
      }
      if (dispatched >= config.batchSize) await new Promise<void>((resolve) => setImmediate(resolve));
      else await this.signal.wait(config.pollIntervalMs);
    }
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
