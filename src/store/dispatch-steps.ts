/**
 * The rows the engine's steps before a submit read from the store, and the writes they hand back
 * (materialise, claim, recovery: src/engine/steps/). The step-store contracts that use them are in
 * src/engine/steps/; both backends' classes (sqlite/ and postgres/ *-queries.ts) implement them.
 */
import type { CreditMovement } from '../accounts/credits.js';
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
  /** What each of its parts costs (0: unpriced), fixed when its campaign was processed. */
  credits_per_part: number;
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
  /** Releases of what the finished recipients reserved (their parts will never be sent). */
  credits: readonly CreditMovement[];
}

export interface MaterialiseWritten {
  /** The campaigns of closeCampaigns that were marked dispatched. */
  closedCampaigns: string[];
  /** Outbox rows written. */
  webhooksQueued: number;
}

/**
 * A campaign with queued parts on the transport, and how many are due now (counted up to the claim's
 * limit); with its client and, when that client has a send rate (client_send_rates), the rate's
 * state: null for an unlimited client.
 */
export interface ClaimCandidate {
  campaignId: string;
  due: number;
  /** Null when no client has a send rate: the client is then not read (a claim costs what it did before rates). */
  clientId: number | null;
  partsPerSecond: number | null;
  nextPartAtUs: number | null;
}

/** A rated client's row of client_send_rates as a claim reads (and on PostgreSQL locks) it. */
export interface ClientSendRate {
  clientId: number;
  partsPerSecond: number;
  nextPartAtUs: number;
}

/** Where a claim leaves a rated client's limiter: its next part's theoretical arrival time (src/engine/send-rate.ts). */
export interface SendRateAdvance {
  clientId: number;
  nextPartAtUs: number;
}

/** What a claim writes (planClaim in src/engine/steps/claim.ts decides it). */
export interface ClaimWrite {
  /** In serving order; campaigns with nothing due are left out. */
  shares: ClaimShare[];
  /** Each rated client that takes parts in this claim: its limiter's new state. Ascending client id. */
  sendRates: SendRateAdvance[];
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
  /** message_parts.credits: its recipient's credits_per_part (absent: 0, unpriced). */
  credits?: number;
}

/** A campaign's texts as a submit needs them. */
export interface DueCampaign {
  id: string;
  client_id: number;
  sender: string;
  text: string;
  text_sent: string | null;
  /** An SMPP customer's cut as JSON (CustomerCut, src/smpp-server/contracts.ts); null for an HTTP campaign. */
  smpp_submit: string | null;
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
