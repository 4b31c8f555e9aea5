/**
 * Materialising: due recipients become durable message parts. A recipient is due when its campaign
 * is ready and its send_at has passed. One pass, in one transaction:
 *   read   the ready campaigns with their waiting recipients counted (readReadyCampaigns);
 *   decide which are due (isDue) and how many each gets of the pass's budget (planShares: even shares, what one
 *          leaves unused goes to the others, so a small campaign is not queued behind every
 *          recipient of a large one);
 *   read   those recipients (takeRecipients);
 *   decide their parts: one per SMS part, 'queued' on the route's transport, or 'undelivered' with
 *          NO_ROUTE when no running transport matches; the recipients marked dispatched; the
 *          NO_ROUTE ones finished at once with their status and Delivery Receipt, and what they
 *          reserved released (their parts will never be sent); the campaigns that may be done
 *          (planMaterialise);
 *   write  all of it (writeMaterialise), so a crash leaves either all or none.
 */
import type { CreditMovement } from '../../accounts/credits.js';
import type { StoreMode, StoreResult } from '../store-mode.js';
import type { CampaignPlan, CampaignTexts } from '../campaign-plans.js';
import { concatReferenceFor } from '../../sms/udh.js';
import { fillEvenShares } from '../even-shares.js';
import { planRoute, type RouteTable, type TransportConditions } from '../routing.js';
import { PartChangeLedger } from './part-changes.js';
import type { NewPart } from '../../store/dispatch-steps.js';
import type {
  DeliveryReceiptEvent, ReadyCampaign, DueRecipient, MaterialiseWrite, MaterialiseWritten, RecipientShare, RecipientStatusWrite,
} from '../../store/dispatch-steps.js';

/** Status of a part whose number matches no route (README: "No route"). */
export const NO_ROUTE_STATUS = 'NO_ROUTE';

/** Ready campaigns read per pass, earliest send time first (the due ones before the others): the pass's budget is shared among the due ones. */
export const DUE_CAMPAIGNS_PER_PASS = 16;

/**
 * The store side of a materialise pass. All three run inside one transaction (SQLite: the
 * caller's db.transaction; PostgreSQL: one transaction on one pooled connection).
 */
export interface MaterialiseStepStore<M extends StoreMode> {
  /**
   * Up to `limit` campaigns in state 'ready' not yet dispatched, earliest send_at first (none
   * counts as 0), each with its 'waiting' recipients counted up to `cap`; counted only when its
   * send_at is at or before `nowMs` (0 otherwise: it is not due, its recipients are not read).
   */
  readReadyCampaigns(nowMs: number, limit: number, cap: number): StoreResult<M, ReadyCampaign[]>;
  /**
   * Each share's first `take` waiting recipients (by id), with their campaign's client and webhook
   * URL; in the shares' order. PostgreSQL locks them FOR UPDATE SKIP LOCKED: a recipient another
   * node is materialising is passed over (it may return fewer), so none is materialised twice.
   */
  takeRecipients(shares: readonly RecipientShare[]): StoreResult<M, DueRecipient[]>;
  /**
   * Writes the plan: parts inserted in order, recipients marked dispatched (only those still
   * 'waiting'), finished recipients' statuses, their outbox rows, and each campaign of
   * closeCampaigns marked dispatched when none of its recipients is waiting any more. PostgreSQL:
   * one statement per kind of write.
   */
  writeMaterialise(plan: MaterialiseWrite): StoreResult<M, MaterialiseWritten>;
}

/** Where recipients go: the route table, and the transports this engine runs as they are now (a snapshot per pass). */
export interface Routing {
  routes: RouteTable;
  conditions: TransportConditions;
}

/** What a pass did, for the engine (lanes to wake, webhooks to send). */
export interface MaterializeResult {
  recipients: number;
  /** Parts queued per transport name (lanes to wake). */
  queuedByTransport: Map<string, number>;
  webhooksEnqueued: boolean;
}

export interface UnroutedRecipient {
  campaignId: string;
  msisdn: string;
  /** The transport the route named that is not running, or undefined when no route matched. */
  routed: string | undefined;
}

/** The write of a pass, and what to tell once it committed. */
export interface MaterialisePlan extends MaterialiseWrite {
  /** Recipients materialised. */
  recipients: number;
  queuedByTransport: Map<string, number>;
  /** Recipients no running transport serves (the caller warns once per campaign). */
  unrouted: UnroutedRecipient[];
}


/** A campaign is due once its send time has passed (none: at once). */
export function isDue(campaign: Pick<ReadyCampaign, 'send_at'>, nowMs: number): boolean {
  return (campaign.send_at ?? 0) <= nowMs;
}

/**
 * How many waiting recipients each due campaign gets of `batchSize`: even shares in the campaigns'
 * order, what one cannot use going to the others (evenShares). Campaigns that get none are left out.
 */
export function planShares(ready: readonly ReadyCampaign[], batchSize: number, nowMs: number): RecipientShare[] {
  return fillEvenShares(ready.filter((c) => isDue(c, nowMs)), (campaign) => campaign.waiting, batchSize)
    .filter((f) => f.take > 0)
    .map((f) => ({ campaignId: f.candidate.id, take: f.take }));
}

export interface MaterialiseFacts {
  /** As read by readReadyCampaigns with `cap`. */
  ready: readonly ReadyCampaign[];
  cap: number;
  /** As returned by takeRecipients for planShares(ready, ...). */
  taken: readonly DueRecipient[];
  /** Each campaign's text as SMS parts (CampaignPlans). */
  plans: { planFor(campaign: CampaignTexts): Pick<CampaignPlan, 'segments'> };
  routing: Routing;
  nowMs: number;
}

/** The parts, marks, finished recipients and campaigns to close of one pass. */
export function planMaterialise(facts: MaterialiseFacts): MaterialisePlan {
  const { cap, taken, routing, nowMs } = facts;
  const due = facts.ready.filter((c) => isDue(c, nowMs));
  const parts: NewPart[] = [];
  const dispatched: number[] = [];
  const statuses: RecipientStatusWrite[] = [];
  const webhooks: DeliveryReceiptEvent[] = [];
  const credits: CreditMovement[] = [];
  const unrouted: UnroutedRecipient[] = [];
  const queuedByTransport = new Map<string, number>();
  const campaigns = new Map(due.map((c) => [c.id, c]));
  const takenPerCampaign = new Map<string, number>();
  const partsTotals = new Map<string, number>();
  for (const recipient of taken) {
    const campaign = campaigns.get(recipient.campaign_id);
    if (campaign === undefined) continue;
    takenPerCampaign.set(campaign.id, (takenPerCampaign.get(campaign.id) ?? 0) + 1);
    let partsTotal = partsTotals.get(campaign.id);
    if (partsTotal === undefined) partsTotals.set(campaign.id, (partsTotal = facts.plans.planFor(campaign).segments.length));
    // Outside its route's window a part waits queued until it opens (planRoute, docs/behaviour/routes.md).
    const choice = planRoute(routing.routes, { msisdn: recipient.msisdn, client: recipient.client_name, spreadKey: recipient.id }, routing.conditions, nowMs);
    const transport = choice.kind === 'no-route' ? undefined : choice.transport;
    const routed = choice.kind === 'no-route' ? choice.routed : transport;
    const recipientParts = partsFor(recipient, partsTotal, transport, choice.kind === 'wait' ? choice.untilMs : nowMs, nowMs);
    parts.push(...recipientParts);
    dispatched.push(recipient.id);
    if (transport !== undefined) {
      queuedByTransport.set(transport, (queuedByTransport.get(transport) ?? 0) + partsTotal);
      continue;
    }
    unrouted.push({ campaignId: campaign.id, msisdn: recipient.msisdn, routed });
    // Finished at once: its parts end unsent, a part change like any other, so the part-change
    // ledger decides its status, its Delivery Receipt and the release of what its parts reserved.
    const ledger = new PartChangeLedger({
      // Not inserted yet: the ledger keys parts by id, so each gets a placeholder of its own, queued
      // as a routed part would be, then ended as planned.
      parts: recipientParts.map((p) => ({
        id: -p.partNumber, recipient_id: recipient.id, part_number: p.partNumber, parts_total: p.partsTotal,
        state: 'queued', last_status: null, final_at: null, claimed_by: null, credits: recipient.credits_per_part,
        campaign_id: recipient.campaign_id, client_id: recipient.client_id,
      })),
      recipients: [recipient],
    }, nowMs);
    for (const p of recipientParts) ledger.patchPart(-p.partNumber, { state: p.state, last_status: p.lastStatus, final_at: p.finalAt });
    ledger.afterPartChange(recipient.id, { status: NO_ROUTE_STATUS, final: true });
    const change = ledger.plan();
    statuses.push(...change.recipients);
    webhooks.push(...change.outbox);
    credits.push(...change.credits);
  }
  // A campaign whose waiting recipients were all counted (fewer than the cap) and all taken may be
  // done; the write checks that none is waiting (one another node holds locked still is).
  const closeCampaigns = due.filter((c) => c.waiting < cap && (takenPerCampaign.get(c.id) ?? 0) >= c.waiting).map((c) => c.id);
  return { nowMs, parts, dispatched, statuses, webhooks, closeCampaigns, credits, recipients: dispatched.length, queuedByTransport, unrouted };
}

/**
 * Whether a pass's write must reach the disk at its own commit, or may wait for the next
 * synchronous commit on the connection (SQLite: src/store/sqlite/deferred-sync.ts). A pass that
 * only queues parts tells nobody anything: a part leaves the box only after its claim, whose own
 * synchronous commit comes later in the same WAL and so makes this pass durable first; a crash
 * before that leaves its recipients waiting, materialised again from scratch. A pass that finishes
 * a recipient (NO_ROUTE: its status, its Delivery Receipt in the outbox, which the webhook sender
 * may send as soon as it is committed, its credits released) or closes a campaign makes something
 * visible that must not be lost after it was seen, so it syncs at its commit as before.
 */
export function materialiseNeedsOwnSync(plan: MaterialiseWrite): boolean {
  return plan.statuses.length > 0 || plan.webhooks.length > 0 || plan.credits.length > 0 || plan.closeCampaigns.length > 0;
}

/** A recipient's parts: 'queued' on its transport, or 'undelivered' with NO_ROUTE, final now, when there is none. */
function partsFor(recipient: DueRecipient, partsTotal: number, transport: string | undefined, dueAtMs: number, nowMs: number): NewPart[] {
  const concatReference = concatReferenceFor(recipient.id);
  return Array.from({ length: partsTotal }, (_, i) => ({
    recipientId: recipient.id,
    campaignId: recipient.campaign_id,
    partNumber: i + 1,
    partsTotal,
    concatReference,
    transport: transport ?? null,
    state: transport === undefined ? 'undelivered' : 'queued',
    lastStatus: transport === undefined ? NO_ROUTE_STATUS : null,
    nextAttemptAt: dueAtMs,
    finalAt: transport === undefined ? nowMs : null,
    credits: recipient.credits_per_part,
  }));
}
