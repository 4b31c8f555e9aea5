/**
 * The one narrow seam through which the running gateway reports what it does, for metrics and the
 * admin status page (src/admin). The engine, the webhook sender, the store's group commits and the
 * API call it at a few points; the composition root (src/index.ts) passes the admin's
 * implementation, everything else gets NOOP_OBSERVER. Implementations must be cheap and must never
 * throw: they run on the hot paths (one call per part, receipt and webhook attempt).
 *
 * State that can be read (queue depth, binds up, dead letters, modem signal) is not reported
 * here: the admin reads it when scraped.
 */
import type { PartOutcome, TransportReceipt, TransportState } from './transports/transport.js';

/**
 * The smsgate_part_outcomes_total label values (README): a 'not-sent' part counts as
 * failed-temporary, as it did before the outcome union named it.
 */
export type PartOutcomeKind = 'accepted' | 'failed-permanent' | 'failed-temporary';

/** What one webhook attempt came to: a 2xx, a retry scheduled, or a dead letter. */
export type WebhookAttemptResult = 'delivered' | 'retry' | 'dead';

/** Whose endpoint a webhook attempt went to, and its breaker after the attempt (the status page). */
export interface WebhookAttemptDetail {
  clientId: number;
  /** The attempt's error (ECONNREFUSED, HTTP_503, TIMEOUT...); null when delivered or when it failed fast. */
  error: string | null;
  /** True when the breaker was open and no request was made (last_error CIRCUIT_OPEN). */
  failedFast: boolean;
  breaker: 'closed' | 'open' | 'half-open';
  /** When an open breaker lets its trial through (the sender's clock); null when not open. */
  halfOpensAtMs: number | null;
}

export interface GatewayObserver {
  /** `parts` parts are handed to the transport's submit now. */
  partsSubmitted(transport: string, parts: number): void;
  /** One outcome of a part handed to the transport (called once per part partsSubmitted counted), as the transport gave it. */
  partOutcome(transport: string, outcome: PartOutcome): void;
  /** A transport reported a receipt (before it is stored). */
  receiptReceived(transport: string, receipt: TransportReceipt): void;
  /** An inbound (mobile-originated) PDU that is one part of a concatenated message was stored (a repeat is not counted). */
  inboundPart(transport: string): void;
  /** An inbound message was stored whole: a single PDU, its last part, or (incomplete) what arrived by the reassembly timeout. */
  inboundMessage(transport: string, incomplete: boolean): void;
  /** One webhook attempt ended; lagMs is receipt stored -> 2xx, given only when delivered. */
  webhookAttempt(result: WebhookAttemptResult, lagMs?: number, detail?: WebhookAttemptDetail): void;
  /** One group commit of the engine's writes took this long (transaction start to commit). */
  dbCommit(seconds: number): void;
  /** One API request: route is the router's pattern ('/v1/campaign/:id'), never the raw path. */
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  /** A transport changed state (engine's onState), at atMs. */
  transportState(transport: string, state: TransportState, atMs: number): void;
  /** Queued parts of a route moved from one of its transports to another (failover, moving back, a replaced route). */
  routeFailover?(route: string, from: string, to: string, parts: number): void;
}

export const NOOP_OBSERVER: GatewayObserver = {
  partsSubmitted() {},
  partOutcome() {},
  receiptReceived() {},
  inboundPart() {},
  inboundMessage() {},
  webhookAttempt() {},
  dbCommit() {},
  httpRequest() {},
  transportState() {},
};
