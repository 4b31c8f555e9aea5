/**
 * When a part that failed temporarily is tried again: exponential backoff without jitter
 * (deterministic, so operators can predict it from the config), capped, and never earlier than
 * the transport asked (retryAfterMs, e.g. after ESME_RTHROTTLED).
 */
import type { EngineConfig } from './config.js';

export type RetryPolicy = Pick<EngineConfig, 'maxAttempts' | 'retryBaseDelayMs' | 'retryMaxDelayMs'>;

/**
 * @param attemptsMade submits made so far, the failed one included (1 after the first failure)
 * @returns when the next attempt is due (ms since epoch): base * 2^(attemptsMade-1), at most retryMaxDelayMs
 */
export function nextRetryAt(attemptsMade: number, nowMs: number, policy: RetryPolicy, retryAfterMs = 0): number {
  return nowMs + Math.max(backoffDelayMs(attemptsMade, policy.retryBaseDelayMs, policy.retryMaxDelayMs), retryAfterMs);
}

/**
 * The wait after the `failures`-th failure in a row: base * 2^(failures-1), at most maxMs. Parts'
 * retries use it, and so do the group commits of both backends when the store refuses a batch.
 */
export function backoffDelayMs(failures: number, baseMs: number, maxMs: number): number {
  const exponent = Math.max(0, failures - 1);
  // 2 ** 60 would still be finite, but cap the exponent so the product never becomes Infinity.
  return Math.min(maxMs, baseMs * 2 ** Math.min(exponent, 40));
}

/** True when a part that has failed temporarily attemptsMade times may not be tried again. */
export function attemptsExhausted(attemptsMade: number, policy: RetryPolicy): boolean {
  return attemptsMade >= policy.maxAttempts;
}
