/**
 * Per client, what the webhook sender last said about its endpoint: the breaker's state and the
 * last real error, the cause (ECONNREFUSED, HTTP_503, TIMEOUT) rather than the CIRCUIT_OPEN its
 * fast-failed retries record. The outbox rows keep only each row's last error, which becomes
 * CIRCUIT_OPEN once the breaker opens, so the cause is kept here, in memory, from the attempts the
 * observer reports (the sender thread's included). A client whose endpoint was not tried since
 * start has no entry.
 */
import type { WebhookAttemptDetail } from '../gateway-observer.js';

export type BreakerState = WebhookAttemptDetail['breaker'];

export interface ClientEndpointHealth {
  /** As of the last attempt, an open breaker read at `now`: half-open once its window has passed. */
  breaker: BreakerState;
  lastError: string | null;
  lastErrorAtMs: number | null;
  lastAttemptAtMs: number;
}

export class WebhookHealth {
  private readonly byClient = new Map<number, { detail: WebhookAttemptDetail; atMs: number; lastError: string | null; lastErrorAtMs: number | null }>();

  constructor(private readonly now: () => number = Date.now) {}

  attempted(detail: WebhookAttemptDetail): void {
    const atMs = this.now();
    const previous = this.byClient.get(detail.clientId);
    const real = detail.error;
    this.byClient.set(detail.clientId, {
      detail,
      atMs,
      lastError: real ?? previous?.lastError ?? null,
      lastErrorAtMs: real === null ? (previous?.lastErrorAtMs ?? null) : atMs,
    });
  }

  of(clientId: number): ClientEndpointHealth | undefined {
    const entry = this.byClient.get(clientId);
    if (entry === undefined) return undefined;
    const { breaker, halfOpensAtMs } = entry.detail;
    const effective: BreakerState = breaker === 'open' && halfOpensAtMs !== null && this.now() >= halfOpensAtMs ? 'half-open' : breaker;
    return { breaker: effective, lastError: entry.lastError, lastErrorAtMs: entry.lastErrorAtMs, lastAttemptAtMs: entry.atMs };
  }
}
