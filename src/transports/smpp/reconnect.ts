/**
 * Reconnect delays: exponential backoff with "equal jitter" (half fixed, half random), so a
 * restarted SMSC is not hit by every bind at the same instant yet never retried sooner than half
 * the nominal delay. Pure: the caller passes the attempt number and a random value in [0, 1).
 */
export interface BackoffPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
}

/** The SMPP transport's defaults (config.ts SMPP_DEFAULTS.reconnect): 1 s doubling to 60 s. */
export const DEFAULT_BACKOFF: BackoffPolicy = { initialDelayMs: 1_000, maxDelayMs: 60_000 };

/**
 * attempt 0 is the first retry. Nominal delay = min(maxDelayMs, initialDelayMs * 2^attempt);
 * the result lies in [nominal / 2, nominal).
 */
export function nextReconnectDelayMs(attempt: number, random: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  const exponent = Math.min(Math.max(0, Math.floor(attempt)), 30);
  const nominalMs = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** exponent);
  const unit = Math.min(Math.max(random, 0), 1);
  return Math.floor(nominalMs / 2 + (nominalMs / 2) * unit);
}

/**
 * After a bind refused for its credentials a fast retry cannot succeed and only floods the
 * SMSC's logs (and may lock the account), so the backoff starts at authFailureDelayMs (30 s by
 * default) and doubles up to the larger of maxDelayMs and 10 minutes.
 */
export function authFailurePolicy(policy: BackoffPolicy & { authFailureDelayMs: number }): BackoffPolicy {
  return {
    initialDelayMs: policy.authFailureDelayMs,
    maxDelayMs: Math.max(policy.maxDelayMs, policy.authFailureDelayMs, 600_000),
  };
}
