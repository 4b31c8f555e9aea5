/**
 * The rows the engine's steps before a submit read from the store, and the writes they hand back
 * (materialise, claim, recovery: src/engine/steps/). The step-store contracts that use them are in
 * src/engine/steps/; both backends' classes (sqlite/ and postgres/ *-queries.ts) implement them.
 */
import type { RecipientStatus } from './entities.js';

/**
 * A ready campaign not yet dispatched, with how many of its recipients are waiting (counted up to
 * the pass's budget, and only once its send time has passed: 0 before).
 */
export interface ReadyCampaign extends DueCampaign {
  send_at: number | null;
  waiting: number;
}

/** Take up to `take` waiting recipients of a campaign (its oldest first). */
export interface RecipientShare {
  campaignId: string;
  take: number;
}

/** A waiting recipient taken for materialising, with what its status change and webhook need. */
export interface DueRecipient {
  id: number;
  campaign_id: string;
  msisdn: string;
  status: RecipientStatus;
  last_status: string | null;
  client_reference: string | null;
  client_id: number;
  /** The client's name: routes for named clients match on it. */
  client_name: string;
  sender: string;
  webhook_url: string | null;
}

/** A recipient's new summary status. */
export interface RecipientStatusWrite {
  recipientId: number;
  status: RecipientStatus;
  lastStatus: string | null;
}

/**
 * A Delivery Receipt webhook to queue in the outbox (SPEC "Delivery Receipt"): the body's facts
 * and whose endpoint gets it. The one declaration: the engine plans these, the stores write them,
 * src/webhooks/delivery-receipt.ts serialises them.
 */
export interface DeliveryReceiptEvent {
  clientId: number;
  /** Kept with the event for diagnostics; null for an event not tied to a stored recipient. */
  recipientId: number | null;
  /** The recipient's normalised msisdn. */
  to: string;
  /** The campaign's sender id. */
  from: string;
  /** The receipt status, already fitted to 30 characters (src/receipts fitStatus). */
  status: string;
  clientReference: string | null;
}

/** Everything one materialise pass writes, in one transaction. */
export interface MaterialiseWrite {
  nowMs: number;
  /** In insertion order: a recipient's parts by part number, recipients in id order. */
  parts: readonly NewPart[];
  /** Recipients that now have their parts: 'waiting' -> 'dispatched'. */
  dispatched: readonly number[];
  /** Recipients finished at once (no route): their new status. */
  statuses: readonly RecipientStatusWrite[];
  /** Their Delivery Receipts (clients with a webhook URL only). */
  webhooks: readonly DeliveryReceiptEvent[];
  /** Campaigns that may have no waiting recipient left: marked dispatched unless one still waits. */
  closeCampaigns: readonly string[];
}

export interface MaterialiseWritten {
  /** The campaigns of closeCampaigns that were marked dispatched. */
  closedCampaigns: string[];
  /** Outbox rows written. */
  webhooksQueued: number;
}

/** A campaign with queued parts on the transport, and how many are due now (counted up to the claim's limit). */
export interface ClaimCandidate {
  campaignId: string;
  due: number;
}

/** Take up to `take` due parts of a campaign (oldest due first). */
export interface ClaimShare {
  campaignId: string;
  take: number;
}

/** A part to insert: materialising writes a pass's parts (queued on its transport, or final with NO_ROUTE). */
export interface NewPart {
  recipientId: number;
  campaignId: string;
  partNumber: number;
  partsTotal: number;
  concatReference: number;
  transport: string | null;
  state: 'queued' | 'undelivered';
  lastStatus: string | null;
  nextAttemptAt: number;
  finalAt: number | null;
}

/** A campaign's texts as a submit needs them. */
export interface DueCampaign {
  id: string;
  client_id: number;
  sender: string;
  text: string;
  text_sent: string | null;
}

/* Rerouting queued parts (src/engine/steps/reroute.ts). */

/** A queued part as rerouting reads it. */
export interface QueuedPart {
  id: number;
  recipient_id: number;
  transport: string;
  next_attempt_at: number;
  msisdn: string;
  client_name: string;
}

/** One part's new transport and due time; `route`: the route's label (the metric's). */
export interface PartReroute {
  partId: number;
  from: string;
  to: string;
  nextAttemptAt: number;
  route: string;
}

/**
 * Which queued parts a batch reads: those after `afterId`, on `transports` (all when null), due by
 * `dueByMs` when given, with these ids when `partIds` is given.
 */
export interface QueuedPartsQuery {
  afterId: number;
  limit: number;
  transports: readonly string[] | null;
  dueByMs: number | null;
  partIds?: readonly number[];
}
