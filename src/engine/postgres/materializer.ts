/**
 * The scheduler on PostgreSQL: up to batchSize due recipients, shared evenly
 * among the due campaigns as on SQLite (Scheduler), become parts in ONE transaction. Recipients are
 * taken FOR UPDATE SKIP LOCKED, so two nodes never materialise one recipient twice; their parts, the
 * 'dispatched' marks and the NO_ROUTE recipients' final status with its webhook outbox row commit
 * together, so a crash leaves all or nothing.
 */
import type { Logger } from '../../common/log.js';
import type { DueCampaign } from '../../store/sqlite/dispatch-store.js';
import { PgDispatchStore } from '../../store/postgres/dispatch-store.js';
import { inTransaction, type PgPool } from '../../store/postgres/pool.js';
import type { CampaignPlans } from '../campaign-plans.js';
import { NO_ROUTE_STATUS, NoRouteWarnings, routeRecipients, type MaterializeResult, type Routing, type UnroutedRecipient } from '../sqlite/scheduler.js';
import { PgPartChanges } from './part-changes.js';
import { evenShares } from '../even-shares.js';

interface Committed {
  noRoute: { campaignId: string; recipient: UnroutedRecipient }[];
  campaignsDone: string[];
}

export class PgMaterializer {
  private readonly noRoute: NoRouteWarnings;

  constructor(
    private readonly pool: PgPool,
    private readonly routing: Routing,
    private readonly plans: CampaignPlans,
    private readonly logger: Logger,
  ) {
    this.noRoute = new NoRouteWarnings(logger);
  }

  async materializeDue(nowMs: number, batchSize: number): Promise<MaterializeResult> {
    const { result, committed } = await inTransaction(this.pool, async (client) => {
      const store = new PgDispatchStore(client);
      const changes = new PgPartChanges(store, client, this.logger);
      const result: MaterializeResult = { recipients: 0, queuedByTransport: new Map(), webhooksEnqueued: false };
      const committed: Committed = { noRoute: [], campaignsDone: [] };
      const shares = evenShares(await store.dueCampaigns(nowMs, 16), batchSize);
      for (let share = shares.next(); share.done !== true; ) {
        share = shares.next(await this.materializeCampaign(store, changes, share.value.candidate, share.value.room, nowMs, result, committed));
      }
      return { result, committed };
    });
    // Logged once committed: a rolled-back pass did none of it.
    for (const { campaignId, recipient } of committed.noRoute) this.noRoute.warn(campaignId, recipient.msisdn, recipient.routed);
    for (const campaignId of committed.campaignsDone) this.logger.info({ campaignId }, 'campaign fully dispatched to transports');
    return result;
  }

  private async materializeCampaign(
    store: PgDispatchStore, changes: PgPartChanges, campaign: DueCampaign, limit: number, nowMs: number, result: MaterializeResult, committed: Committed,
  ): Promise<number> {
    const waiting = await store.takeWaitingRecipients(campaign.id, limit);
    const { parts, unrouted } = routeRecipients(campaign.id, this.plans.planFor(campaign).segments.length, waiting, this.routing, nowMs, result);
    await store.insertParts(parts, nowMs);
    await store.markRecipientsDispatched(waiting.map((r) => r.id), nowMs);
    for (const recipient of unrouted) {
      committed.noRoute.push({ campaignId: campaign.id, recipient });
      if (await changes.afterPartChange(recipient.id, { status: NO_ROUTE_STATUS, final: true }, nowMs)) result.webhooksEnqueued = true;
    }
    result.recipients += waiting.length;
    // Recipients another node holds locked right now are still 'waiting': the campaign is not done yet.
    if (waiting.length < limit && (await store.markCampaignDispatchedIfDone(campaign.id, nowMs))) committed.campaignsDone.push(campaign.id);
    return waiting.length;
  }
}
