/**
 * The engine on PostgreSQL: what engine-backend.ts asks, each unit one
 * transaction on one pooled connection. Claims are stamped with node.nodeId() (asked at each claim
 * and write), outcome writes fenced on it; outcome and receipt units the database refuses for a
 * passing reason are retried until they commit (PgUnitRunner).
 *
 * Start and stop touch only this node's work: a node of a cluster requeues nothing at start (live
 * peers' parts are 'submitting' too; the cluster runtime's reaper requeues expired nodes' parts,
 * node-takeover.ts), and at stop it requeues only the parts it still holds. A single gateway on
 * PostgreSQL (no node id) requeues its own unstamped parts at start, as on SQLite.
 */
import type { NodeIdSource } from '../../common/node-id.js';
import type { Logger } from '../../common/log.js';
import type { DueCampaign } from '../../store/sqlite/dispatch-store.js';
import { PgDispatchStore } from '../../store/postgres/dispatch-store.js';
import { PgInboundStore } from '../../store/postgres/inbound-store.js';
import type { PgPool } from '../../store/postgres/pool.js';
import { PgUndecodablePduStore } from '../../store/postgres/undecodable-pdu-store.js';
import type { TransportReceipt } from '../../transports/transport.js';
import type { CampaignPlans } from '../campaign-plans.js';
import type { EngineConfig } from '../config.js';
import type { BackendStats, EngineBackend, LaneClaimer } from '../engine-backend.js';
import { PgFairClaimer } from '../fair-claim.js';
import type { SubmitResult } from '../steps/outcomes.js';
import type { DeliveryReceiptSink } from '../sqlite/delivery-receipt-sink.js';
import { MaterialiseReport } from '../materialise-report.js';
import { DUE_CAMPAIGNS_PER_PASS, planMaterialise, planShares, type MaterializeResult, type Routing } from '../steps/materialise.js';
import { planStartRecovery, planStopRequeue } from '../steps/recovery.js';
import { PgRecoveryStore } from '../../store/postgres/recovery-queries.js';
import { inTransaction } from '../../store/postgres/pool.js';
import { pgStepStores } from './step-stores.js';
import { planReroute, type PartReroute, type QueuedPartsQuery } from '../steps/reroute.js';
import { PgOutcomeWriter } from './outcome-writer.js';
import { PgReceiptWriter } from './receipt-writer.js';
import { PgUnitRunner, type PgWriteRetryOptions } from './unit-runner.js';

export type { PgWriteRetryOptions } from './unit-runner.js';

export interface PgBackendDeps {
  pool: PgPool;
  node: NodeIdSource;
  config: EngineConfig;
  logger: Logger;
  /** Only wake() is used: the outbox rows are written inside the engine's own transactions (step-stores.ts). */
  deliveryReceipts: Pick<DeliveryReceiptSink, 'wake'>;
  /** Called after a commit that stored deliver_sm rows for SMPP customers (the delivery sender sends them at once). */
  smppDeliveries?: { wake(): void };
  /** The route table and the transports' states now (a snapshot per pass). */
  routing: () => Routing;
  plans: CampaignPlans;
  now: () => number;
  retry?: PgWriteRetryOptions;
}

export class PgEngineBackend implements EngineBackend {
  readonly undecodable: PgUndecodablePduStore;
  readonly inbound: PgInboundStore;
  private readonly store: PgDispatchStore;
  private readonly units: PgUnitRunner;
  private readonly report: MaterialiseReport;
  private readonly outcomes: PgOutcomeWriter;
  private readonly receipts: PgReceiptWriter;

  constructor(private readonly deps: PgBackendDeps) {
    const { pool, logger, config, now } = deps;
    const wake = (): void => deps.deliveryReceipts.wake();
    this.store = new PgDispatchStore(pool);
    this.undecodable = new PgUndecodablePduStore(pool);
    this.inbound = new PgInboundStore(pool);
    this.units = new PgUnitRunner(pool, logger, deps.retry);
    this.report = new MaterialiseReport(logger);
    const wakeSmpp = (): void => deps.smppDeliveries?.wake();
    this.outcomes = new PgOutcomeWriter(this.units, config, logger, now, wake, wakeSmpp);
    this.receipts = new PgReceiptWriter(pool, this.units, logger, now, wake, config, wakeSmpp);
  }

  get stalled(): boolean {
    return this.units.stalled;
  }

  get leaseHeld(): boolean {
    return this.deps.node.leaseHeld?.() ?? true;
  }

  claimantId(): string | null {
    return this.deps.node.nodeId();
  }

  recover(nowMs: number): Promise<{ requeued: number; reopened: number }> {
    const plan = planStartRecovery(this.deps.node.nodeId());
    return inTransaction(this.deps.pool, async (client) => {
      const { recovery } = pgStepStores(client);
      return {
        requeued: plan.requeue.kind === 'requeue' ? await recovery.requeueSubmitting(plan.requeue.claimant, nowMs) : 0,
        reopened: plan.reopenOrphans ? await recovery.reopenOrphanedRecipients() : 0,
      };
    });
  }

  /** One transaction: recipients taken FOR UPDATE SKIP LOCKED, so two nodes never materialise one twice. */
  async materializeDue(nowMs: number, batchSize: number): Promise<MaterializeResult> {
    const { plans } = this.deps;
    const routing = this.deps.routing();
    const { plan, written } = await inTransaction(this.deps.pool, async (client) => {
      const store = pgStepStores(client).materialise;
      const ready = await store.readReadyCampaigns(nowMs, DUE_CAMPAIGNS_PER_PASS, batchSize);
      const taken = await store.takeRecipients(planShares(ready, batchSize, nowMs));
      const plan = planMaterialise({ ready, cap: batchSize, taken, plans, routing, nowMs });
      return { plan, written: await store.writeMaterialise(plan) };
    });
    return this.report.committed(plan, written);
  }

  /** One transaction; the write is guarded on each part still queued where it was read, so nodes rerouting at once move a part once. */
  rerouteBatch(query: QueuedPartsQuery, routing: Routing, nowMs: number, afterFailure = false): Promise<{ read: number; lastId: number; applied: PartReroute[] }> {
    return inTransaction(this.deps.pool, async (client) => {
      const store = pgStepStores(client).reroute;
      const parts = await store.readQueuedParts(query);
      const applied = await store.writeReroute(planReroute(parts, routing, nowMs, afterFailure), nowMs);
      return { read: parts.length, lastId: parts.at(-1)?.id ?? query.afterId, applied };
    });
  }

  claimerFor(transport: string): LaneClaimer {
    return new PgFairClaimer(this.deps.pool, transport);
  }

  campaignTexts(campaignIds: readonly string[]): Promise<DueCampaign[]> {
    return this.store.campaignTexts(campaignIds);
  }

  writeOutcomes(result: SubmitResult): Promise<void> {
    return this.outcomes.write(result);
  }

  acceptReceipt(transport: string, receipt: TransportReceipt): Promise<void> {
    return this.receipts.accept(transport, receipt);
  }

  sweepReceipts(expireReceivedBeforeMs: number): Promise<number> {
    return this.receipts.sweep(expireReceivedBeforeMs);
  }

  async isSubmittedMessageId(transport: string, messageId: string): Promise<boolean> {
    return (await this.store.partByMessageId(transport, messageId)) !== undefined;
  }

  messageIdsAwaitingReceipt(transport: string): Promise<string[]> {
    return this.store.messageIdsAwaitingReceipt(transport);
  }

  beginStop(): void {
    this.outcomes.stopping = true;
  }

  /** Units still waiting for a retry get one last attempt; then this node's own 'submitting' parts go back to the queue. */
  async finishStop(nowMs: number): Promise<number> {
    await this.units.close();
    const plan = planStopRequeue(this.deps.node.nodeId());
    return plan.kind === 'requeue' ? new PgRecoveryStore(this.deps.pool).requeueSubmitting(plan.claimant, nowMs) : Promise.resolve(0);
  }

  stats(): BackendStats {
    return {
      outcomes: { ...this.outcomes.counts },
      receiptsMatched: this.receipts.matched,
      receiptsUnmatched: this.receipts.unmatched,
      commits: this.units.commits,
      failedCommits: this.units.failedCommits,
      fencedWrites: this.outcomes.fencedWrites,
    };
  }
}
