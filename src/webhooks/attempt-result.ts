/**
 * What an attempt's verdict makes of its row, decided once: delivered; a retry at the next delay of
 * the schedule (SPEC "Events" point 5: 2/4/8 s); or a dead letter once the retries are spent or the
 * failure is permanent. A redrive probe is one attempt: a probe that fails is a dead letter again at
 * once (the next probe comes a breaker window later). Pure: time is a parameter.
 */
import type { AttemptRecord } from '../store/sqlite/webhook-store.js';
import { nextWebhookAttemptAt, type AttemptVerdict } from './retry-policy.js';

export interface AttemptFacts {
  id: number;
  /** This attempt's number (the row's attempts so far + 1). */
  attempts: number;
  verdict: AttemptVerdict;
  /** The failure's code (HTTP_503, ECONNREFUSED, CIRCUIT_OPEN...); null for a 2xx. */
  lastError: string | null;
  /** The endpoint the row was sent to; null when the client has no URL now. */
  url: string | null;
  /** Whether the row was sent as a redrive probe. */
  probe: boolean;
  atMs: number;
}

export function attemptResult(facts: AttemptFacts, retryDelaysMs: readonly number[]): AttemptRecord {
  const { id, attempts, verdict, atMs } = facts;
  if (verdict === 'delivered') return { id, kind: 'delivered', attempts, atMs };
  const lastError = facts.lastError ?? 'UNKNOWN';
  const nextAttemptAt = verdict === 'transient' && !facts.probe ? nextWebhookAttemptAt(attempts, atMs, retryDelaysMs) : null;
  if (nextAttemptAt !== null) return { id, kind: 'retry', attempts, nextAttemptAt, lastError };
  return { id, kind: 'dead', attempts, atMs, lastError, reason: verdict === 'transient' ? 'transient' : 'permanent', url: facts.url };
}
