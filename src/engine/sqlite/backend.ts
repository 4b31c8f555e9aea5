/**
 * The engine on SQLite (the default gateway): the synchronous code it always had. Outcomes and
 * receipts are group-committed by the WriteBatcher (one transaction per batch, WriteGroup batches),
 * claims run FairClaimer inside one db.transaction, a materialise pass and recovery are one
 * transaction each (read, plan in steps/, write). The async seam (engine-backend.ts) only wraps
 * these calls; nothing here awaits between a read and its write.
 */
import type { Logger } from '../../common/log.js';
import type { Store } from '../../store/sqlite/database.js';
import { DispatchStore, type DueCampaign } from '../../store/sqlite/dispatch-store.js';
import type { MaterialiseWritten } from '../../store/dispatch-steps.js';
import { CommitDeferredUnless } from '../../store/sqlite/deferred-sync.js';
import { InboundStore } from '../../store/sqlite/inbound-store.js';
import { asyncPort, type Async } from '../../store/ports.js';
import { UndecodablePduStore } from '../../store/sqlite/undecodable-pdu-store.js';
import type { TransportReceipt } from '../../transports/transport.js';
import type { CampaignPlans } from '../campaign-plans.js';
import type { EngineConfig } from '../config.js';
import type { BackendStats, EngineBackend, LaneClaimer } from '../engine-backend.js';
import { FairClaimer } from '../fair-claim.js';
import type { SubmitResult } from '../steps/outcomes.js';
import { planRematch } from '../steps/unmatched-receipts.js';
import { emitLogLines } from '../steps/log-lines.js';
import { logExpiredReceipts } from '../expired-receipts-log.js';
import type { DeliveryReceiptSink } from './delivery-receipt-sink.js';
import { OutcomeWriter } from './outcome-writer.js';
import { ReceiptApplier } from './receipt-applier.js';
import { MaterialiseReport } from '../materialise-report.js';
import { DUE_CAMPAIGNS_PER_PASS, materialiseNeedsOwnSync, planMaterialise, planShares, type MaterialisePlan, type MaterialiseStepStore, type MaterializeResult, type Routing } from '../steps/materialise.js';
import { planStartRecovery, planStopRequeue, type RecoveryStepStore } from '../steps/recovery.js';
import { sqliteStepStores } from './step-stores.js';
import { planReroute, type PartReroute, type QueuedPartsQuery, type RerouteStepStore } from '../steps/reroute.js';
import type { UnmatchedReceiptStore } from '../steps/unmatched-receipts.js';
import { WriteBatcher, type WriteBatcherOptions } from './write-batcher.js';

/** Unmatched receipts matched per sweep transaction. */
const SWEEP_BATCH = 500;

export interface SqliteBackendDeps {
  store: Store;
  config: EngineConfig;
  logger: Logger;
  deliveryReceipts: DeliveryReceiptSink;
  /** Called after a commit that stored deliver_sm rows for SMPP customers (the delivery sender sends them at once). */
  smppDeliveries?: { wake(): void };
  /** The route table and the transports' states now (a snapshot per pass). */
  routing: () => Routing;
  plans: CampaignPlans;
  now: () => number;
  writeBatch?: WriteBatcherOptions;
  /** Told how long each group commit took (smsgate_db_commit_seconds). */
  onCommitTimed: (seconds: number) => void;
}

export class SqliteEngineBackend implements EngineBackend {
  readonly undecodable: Async<UndecodablePduStore>;
  readonly inbound: Async<InboundStore>;
  private readonly store: DispatchStore;
  private readonly batcher: WriteBatcher;
  private readonly receipts: ReceiptApplier;
  private readonly outcomes: OutcomeWriter;
  private readonly materialise: MaterialiseStepStore<'sync'>;
  private readonly recovery: RecoveryStepStore<'sync'>;
  private readonly report: MaterialiseReport;
  /** Materialise passes that only queue parts commit without their own fsync (materialiseNeedsOwnSync). */
  private readonly materialiseCommits: CommitDeferredUnless<{ plan: MaterialisePlan; written: MaterialiseWritten }>;
  private readonly unmatched: UnmatchedReceiptStore<'sync'>;
  private readonly reroute: RerouteStepStore<'sync'>;

  constructor(private readonly deps: SqliteBackendDeps) {
    const { store, logger, config } = deps;
    this.store = new DispatchStore(store.db);
    this.undecodable = asyncPort(new UndecodablePduStore(store.db));
    this.inbound = asyncPort(new InboundStore(store.db));
    this.batcher = new WriteBatcher(store.db, { logger, ...deps.writeBatch });
    this.batcher.onCommitTimed(deps.onCommitTimed);
    // Webhooks enqueued inside a batch are announced to the sender once the batch committed.
    let webhooksEnqueued = false;
    const noteWebhook = (): void => {
      webhooksEnqueued = true;
    };
    let customerDeliveriesStored = false;
    const noteCustomerDeliveries = (): void => {
      customerDeliveriesStored = true;
    };
    this.batcher.onCommit(() => {
      if (customerDeliveriesStored) {
        customerDeliveriesStored = false;
        deps.smppDeliveries?.wake();
      }
      if (!webhooksEnqueued) return;
      webhooksEnqueued = false;
      deps.deliveryReceipts.wake();
    });
    const steps = sqliteStepStores(this.store, deps.deliveryReceipts);
    this.unmatched = steps.unmatchedReceipts;
    this.reroute = steps.reroute;
    this.receipts = new ReceiptApplier(this.batcher, steps.receipts, noteWebhook, logger, deps.now, config, noteCustomerDeliveries);
    this.outcomes = new OutcomeWriter(this.batcher, steps.outcomes, noteWebhook, config, logger, deps.now, noteCustomerDeliveries);
    // Delivery Receipts of recipients finished while materialising go to the outbox in the pass's transaction.
    this.materialise = steps.materialise;
    this.recovery = steps.recovery;
    this.report = new MaterialiseReport(logger);
    this.materialiseCommits = new CommitDeferredUnless(deps.store.db, ({ plan }) => materialiseNeedsOwnSync(plan));
  }

  get stalled(): boolean {
    return this.batcher.stalled;
  }

  /** One gateway on its own file: its claims are never anyone else's. */
  get leaseHeld(): boolean {
    return true;
  }

  claimantId(): null {
    return null;
  }

  /**
   * Parts left 'submitting' by a crash go back to 'queued' and are sent again (at-least-once:
   * duplicates are at most the submits that were in flight), recipients marked dispatched without
   * parts are reopened. One gateway owns this file (the serve lock), so every such part is its own.
   */
  recover(nowMs: number): Promise<{ requeued: number; reopened: number }> {
    const plan = planStartRecovery(this.claimantId());
    return Promise.resolve(
      this.deps.store.db.transaction(() => ({
        requeued: plan.requeue.kind === 'requeue' ? this.recovery.requeueSubmitting(plan.requeue.claimant, nowMs) : 0,
        reopened: plan.reopenOrphans ? this.recovery.reopenOrphanedRecipients() : 0,
      }))(),
    );
  }

  materializeDue(nowMs: number, batchSize: number): Promise<MaterializeResult> {
    const { plans } = this.deps;
    const routing = this.deps.routing();
    const { plan, written } = this.materialiseCommits.run(() => {
      const ready = this.materialise.readReadyCampaigns(nowMs, DUE_CAMPAIGNS_PER_PASS, batchSize);
      const taken = this.materialise.takeRecipients(planShares(ready, batchSize, nowMs));
      const plan = planMaterialise({ ready, cap: batchSize, taken, plans, routing, nowMs });
      return { plan, written: this.materialise.writeMaterialise(plan) };
    });
    return Promise.resolve(this.report.committed(plan, written));
  }

  rerouteBatch(query: QueuedPartsQuery, routing: Routing, nowMs: number, afterFailure = false): Promise<{ read: number; lastId: number; applied: PartReroute[] }> {
    return Promise.resolve(this.deps.store.db.transaction(() => {
      const parts = this.reroute.readQueuedParts(query);
      const applied = this.reroute.writeReroute(planReroute(parts, routing, nowMs, afterFailure), nowMs);
      return { read: parts.length, lastId: parts.at(-1)?.id ?? query.afterId, applied };
    })());
  }

  claimerFor(transport: string): LaneClaimer {
    const claimer = new FairClaimer(this.store, transport);
    const db = this.deps.store.db;
    return { claim: (nowMs, limit) => Promise.resolve(db.transaction(() => claimer.claim(nowMs, limit))()) };
  }

  campaignTexts(campaignIds: readonly string[]): Promise<DueCampaign[]> {
    return Promise.resolve(this.store.campaignTexts(campaignIds));
  }

  writeOutcomes(result: SubmitResult): Promise<void> {
    return this.outcomes.write(result);
  }

  acceptReceipt(transport: string, receipt: TransportReceipt): Promise<void> {
    return this.receipts.accept(transport, receipt);
  }

  /**
   * The unmatched-receipt sweep, as on PostgreSQL: receipts whose part has its message id by now
   * are matched and applied (on one gateway the outcome write matches them in its own commit, so
   * this finds none unless a write was interrupted), then those past the TTL are expired and logged.
   * Synchronous, between group commits: one transaction per batch of SWEEP_BATCH.
   */
  sweepReceipts(expireReceivedBeforeMs: number): Promise<number> {
    const db = this.deps.store.db;
    for (;;) {
      const nowMs = this.deps.now();
      const plan = db.transaction(() => {
        const planned = planRematch(this.unmatched.readMatchable(SWEEP_BATCH), nowMs, this.deps.config);
        this.unmatched.writeMatches(planned, nowMs);
        return planned;
      })();
      emitLogLines(this.deps.logger, plan.changes.logs);
      if (plan.changes.outbox.length > 0) this.deps.deliveryReceipts.wake();
      if (plan.changes.customerDeliveries !== undefined) this.deps.smppDeliveries?.wake();
      if (plan.matches.length < SWEEP_BATCH) break;
    }
    const expired = db.transaction(() => this.unmatched.expireUnmatched(expireReceivedBeforeMs))();
    logExpiredReceipts(this.deps.logger, expired);
    return Promise.resolve(expired.length);
  }

  isSubmittedMessageId(transport: string, messageId: string): Promise<boolean> {
    return Promise.resolve(this.store.partByMessageId(transport, messageId) !== undefined);
  }

  messageIdsAwaitingReceipt(transport: string): Promise<string[]> {
    return Promise.resolve(this.store.messageIdsAwaitingReceipt(transport));
  }

  beginStop(): void {
    this.outcomes.stopping = true;
  }

  /**
   * One last attempt for writes still queued (e.g. the store refused them until now); whatever it
   * cannot commit is dropped, and its parts, still 'submitting', are requeued at the next start.
   */
  finishStop(nowMs: number): Promise<number> {
    this.batcher.flush();
    this.batcher.close();
    const plan = planStopRequeue(this.claimantId());
    return Promise.resolve(plan.kind === 'requeue' ? this.recovery.requeueSubmitting(plan.claimant, nowMs) : 0);
  }

  stats(): BackendStats {
    return {
      outcomes: { ...this.outcomes.counts },
      receiptsMatched: this.receipts.matched,
      receiptsUnmatched: this.receipts.unmatched,
      commits: this.batcher.commits,
      failedCommits: this.batcher.failedCommits,
      fencedWrites: this.outcomes.fencedWrites,
    };
  }
}
