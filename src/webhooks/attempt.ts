/**
 * One attempt at one outbox row: its request (headers, X-Event-Id, signature), sent through the
 * endpoint's circuit breaker, and the verdict of what came back. No state of its own and no result
 * written: the sender turns the outcome into a result (attempt-result.ts) and writes it
 * (result-writer.ts).
 */
import type { DueOutboxRow } from '../store/sqlite/webhook-store.js';
import { EndpointBreakers } from './endpoint-breakers.js';
import type { WebhookHttpClient, WebhookResponse } from './http-client.js';
import type { WebhookOutbox } from './outbox.js';
import { classifyHttpStatus, type AttemptVerdict } from './retry-policy.js';
import type { SecretCache } from './secret-cache.js';
import { SIGNATURE_HEADER, signBody } from './signature.js';

export const WEBHOOK_CONTENT_TYPE = 'application/json; charset=utf-8';
/** The event's identity on every request: the outbox row's UUID, the same on retries, redrives and replays. */
export const EVENT_ID_HEADER = 'X-Event-Id';
export const WEBHOOK_USER_AGENT = 'smsgate (delivery-receipt webhook)';
export const INBOUND_WEBHOOK_USER_AGENT = 'smsgate (inbound-message webhook)';

/** last_error codes written by the sender besides HTTP_<status> and network error codes (ECONNREFUSED...). */
export const WEBHOOK_ERROR = {
  /** The endpoint's breaker was open: the attempt failed fast with no request (SPEC "Events" point 7). */
  circuitOpen: 'CIRCUIT_OPEN',
  /** No response status line within timeoutMs. */
  timeout: 'TIMEOUT',
  /** The client's webhook URL was removed after the event was queued. */
  noWebhookUrl: 'NO_WEBHOOK_URL',
  /** The stored secret does not open with this key file. */
  secretUnreadable: 'SECRET_UNREADABLE',
  invalidUrl: 'INVALID_URL',
} as const;

/** What an attempt came to: no request possible, failed fast on an open breaker, or answered (a response or a network error). */
export type AttemptOutcome =
  | { kind: 'unsendable'; lastError: typeof WEBHOOK_ERROR.noWebhookUrl | typeof WEBHOOK_ERROR.secretUnreadable }
  | { kind: 'circuit-open'; key: string }
  | { kind: 'answered'; verdict: AttemptVerdict; lastError: string | null };

export interface AttemptDeps {
  outbox: Pick<WebhookOutbox, 'assignEventId'>;
  secrets: SecretCache;
  breakers: EndpointBreakers;
  http: WebhookHttpClient;
  timeoutMs: number;
  /** A request is about to go out. */
  onRequest(): void;
  /**
   * The endpoint's latest answer, before its breaker counts it: the failure that may open the
   * breaker (so its line names the cause), or null for an answer that was no transient failure.
   */
  onAnswer(key: string, failure: { clientId: number; url: string; cause: string } | null): void;
}

/**
 * Sends one attempt of `row`. The request starts in the caller's turn (no await before it) unless
 * the row has no event id yet (rare: rows from before event ids), which is assigned first.
 */
export async function sendAttempt(row: DueOutboxRow, deps: AttemptDeps): Promise<AttemptOutcome> {
  if (row.webhookUrl === null || row.webhookUrl === '') return { kind: 'unsendable', lastError: WEBHOOK_ERROR.noWebhookUrl };
  // The stored text, sent and signed as the same UTF-8 bytes (signBody encodes a string as UTF-8).
  const body = row.body;
  const headers: Record<string, string> = {
    'Content-Type': WEBHOOK_CONTENT_TYPE,
    'User-Agent': row.kind === 'inbound' ? INBOUND_WEBHOOK_USER_AGENT : WEBHOOK_USER_AGENT,
    // Awaited only for a row without one (rare): the common path starts its request in this turn.
    [EVENT_ID_HEADER]: row.eventId ?? (await deps.outbox.assignEventId(row.id)),
  };
  if (row.webhookSecretEnc !== null) {
    const secret = deps.secrets.open(row.webhookSecretEnc);
    if (secret === null) return { kind: 'unsendable', lastError: WEBHOOK_ERROR.secretUnreadable };
    headers[SIGNATURE_HEADER] = signBody(body, secret);
  }
  const url = row.webhookUrl;
  const key = EndpointBreakers.keyFor(row.clientId, url);
  const outcome = await deps.breakers.run(key, async () => {
    deps.onRequest();
    const response = await deps.http.post({ url, headers, body, timeoutMs: deps.timeoutMs });
    const verdict = verdictOf(response);
    // Noted before the breaker counts it, so the line of the breaker it opens names this cause.
    deps.onAnswer(key, verdict === 'transient' ? { clientId: row.clientId, url, cause: errorCodeOf(response) ?? 'UNKNOWN' } : null);
    return { verdict, value: response };
  });
  if (outcome.kind === 'circuit-open') return { kind: 'circuit-open', key };
  return { kind: 'answered', verdict: outcome.verdict, lastError: errorCodeOf(outcome.value) };
}

function verdictOf(response: WebhookResponse): AttemptVerdict {
  if (response.kind === 'response') return classifyHttpStatus(response.statusCode);
  // SPEC "Events" point 5: network failures are retried; a URL that cannot be used never will work.
  return response.code === WEBHOOK_ERROR.invalidUrl ? 'permanent' : 'transient';
}

function errorCodeOf(response: WebhookResponse): string | null {
  if (response.kind === 'network-error') return response.code;
  return response.statusCode >= 200 && response.statusCode <= 299 ? null : `HTTP_${response.statusCode}`;
}
