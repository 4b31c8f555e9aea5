/**
 * Turns due recipients into durable message parts. A recipient is due when its campaign is ready
 * and its send_at has passed. In one transaction per batch it routes each recipient, writes one
 * message_parts row per SMS part ('queued', or 'undelivered' with NO_ROUTE when no route matches)
 * and marks the recipient dispatched, so a crash leaves either both or neither.
 */
import type { Logger } from '../../common/log.js';
import type { DispatchStore, DueCampaign, NewPart, WaitingRecipient } from '../../store/sqlite/dispatch-store.js';
import type { CampaignPlans } from '../campaign-plans.js';
import type { RecipientUpdates } from './recipient-updates.js';
import type { RouteTable } from '../routing.js';
import { evenShares } from '../even-shares.js';

/** Status of a part whose number matches no route (README: "No route"). */
export const NO_ROUTE_STATUS = 'NO_ROUTE';

/**
 * The concatenation reference of a recipient's message (the same for every part and retry):
 * derived from the recipient id, so it survives restarts without a stored counter, and two
 * messages to one handset get different references unless 65,536 recipients apart.
 */
export function concatReferenceFor(recipientId: number): number {
  return recipientId & 0xffff;
}

export interface MaterializeResult {
  recipients: number;
  /** Parts queued per transport name (lanes to wake). */
  queuedByTransport: Map<string, number>;
  webhooksEnqueued: boolean;
}

export class Scheduler {
  private readonly noRoute: NoRouteWarnings;

  constructor(
    private readonly store: DispatchStore,
    private readonly routing: Routing,
    private readonly plans: CampaignPlans,
    private readonly recipients: RecipientUpdates,
    private readonly logger: Logger,
  ) {
    this.noRoute = new NoRouteWarnings(logger);
  }

  /**
   * Materialises up to batchSize due recipients in one transaction, shared evenly among the due
   * campaigns (what one leaves unused goes to the others), so a small campaign's recipients are
   * not queued behind every recipient of a large one that is still being materialised.
   */
  materializeDue(nowMs: number, batchSize: number): MaterializeResult {
    const result: MaterializeResult = { recipients: 0, queuedByTransport: new Map(), webhooksEnqueued: false };
    this.store.db.transaction(() => {
      const shares = evenShares(this.store.dueCampaigns(nowMs, 16), batchSize);
      for (let share = shares.next(); share.done !== true; ) {
        share = shares.next(this.materializeCampaign(share.value.candidate, share.value.room, nowMs, result));
      }
    })();
    return result;
  }

  /** Returns the recipients materialised (fewer than `limit`: the campaign has none waiting now). */
  private materializeCampaign(campaign: DueCampaign, limit: number, nowMs: number, result: MaterializeResult): number {
    const waiting = this.store.waitingRecipients(campaign.id, limit);
    // The batch's parts and dispatch marks go in with a few multi-row statements;
    // recipients no route matches are finished after their parts exist.
    const { parts, unrouted } = routeRecipients(campaign.id, this.plans.planFor(campaign).segments.length, waiting, this.routing, nowMs, result);
    this.store.insertParts(parts, nowMs);
    this.store.markRecipientsDispatched(waiting.map((r) => r.id), nowMs);
    for (const recipient of unrouted) {
      this.noRoute.warn(campaign.id, recipient.msisdn, recipient.routed);
      if (this.recipients.afterPartChange(recipient.id, { status: NO_ROUTE_STATUS, final: true }, nowMs)) {
        result.webhooksEnqueued = true;
      }
    }
    result.recipients += waiting.length;
    if (waiting.length < limit && this.store.markCampaignDispatchedIfDone(campaign.id, nowMs)) {
      this.logger.info({ campaignId: campaign.id }, 'campaign fully dispatched to transports');
    }
    return waiting.length;
  }
}

/** Where recipients go: the route table, and the transports this engine runs. */
export interface Routing {
  routes: RouteTable;
  knownTransports: ReadonlySet<string>;
}

export interface UnroutedRecipient {
  id: number;
  msisdn: string;
  /** The transport the route named that is not running, or undefined when no route matched. */
  routed: string | undefined;
}

/**
 * A batch of one campaign's waiting recipients as parts: 'queued' on their route's transport, or
 * 'undelivered' with NO_ROUTE when no running transport matches (those are returned as unrouted,
 * to be finished once their parts exist). Counts the queued parts per transport into `result`.
 */
export function routeRecipients(
  campaignId: string,
  partsTotal: number,
  waiting: readonly WaitingRecipient[],
  routing: Routing,
  nowMs: number,
  result: MaterializeResult,
): { parts: NewPart[]; unrouted: UnroutedRecipient[] } {
  const parts: NewPart[] = [];
  const unrouted: UnroutedRecipient[] = [];
  for (const recipient of waiting) {
    const routed = routing.routes.transportFor(recipient.msisdn);
    const transport = routed !== undefined && routing.knownTransports.has(routed) ? routed : undefined;
    const concatReference = concatReferenceFor(recipient.id);
    for (let partNumber = 1; partNumber <= partsTotal; partNumber++) {
      parts.push({
        recipientId: recipient.id,
        campaignId,
        partNumber,
        partsTotal,
        concatReference,
        transport: transport ?? null,
        state: transport === undefined ? 'undelivered' : 'queued',
        lastStatus: transport === undefined ? NO_ROUTE_STATUS : null,
        nextAttemptAt: nowMs,
        finalAt: transport === undefined ? nowMs : null,
      });
    }
    if (transport === undefined) unrouted.push({ id: recipient.id, msisdn: recipient.msisdn, routed });
    else result.queuedByTransport.set(transport, (result.queuedByTransport.get(transport) ?? 0) + partsTotal);
  }
  return { parts, unrouted };
}

/** One NO_ROUTE warning per campaign, not per recipient. */
export class NoRouteWarnings {
  private readonly warned = new Set<string>();

  constructor(private readonly logger: Logger) {}

  warn(campaignId: string, msisdn: string, routed: string | undefined): void {
    if (this.warned.has(campaignId)) return;
    // Bounded: forgetting old campaigns only means one more warning if they ever come back.
    if (this.warned.size >= 10_000) this.warned.clear();
    this.warned.add(campaignId);
    this.logger.warn(
      { campaignId, example: msisdn, transport: routed },
      routed === undefined
        ? 'no route matches some recipients of this campaign: their parts are undelivered with status NO_ROUTE'
        : `route names transport '${routed}', which is not running: parts undelivered with status NO_ROUTE`,
    );
  }
}
