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
  const exponent = Math.max(0, attemptsMade - 1);
  // 2 ** 60 would still be finite, but cap the exponent so the product never becomes Infinity.
  const backoffMs = Math.min(policy.retryMaxDelayMs, policy.retryBaseDelayMs * 2 ** Math.min(exponent, 40));
  return nowMs + Math.max(backoffMs, retryAfterMs);
}

/** True when a part that has failed temporarily attemptsMade times may not be tried again. */
export function attemptsExhausted(attemptsMade: number, policy: RetryPolicy): boolean {
  return attemptsMade >= policy.maxAttempts;
}
