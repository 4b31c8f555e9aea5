/**
 * How one bind slows down after the SMSC says ESME_RTHROTTLED (0x58) or ESME_RMSGQFUL (0x14),
 * and how it recovers. Pure: the caller passes nowMs.
 *
 * Each slow-down answer pauses the bind for a doubling delay (initial 1 s by default, at most
 * 30 s); each accepted submit after the pause halves the next delay step again, so a bind that
 * was throttled once goes back to full speed after a few successes.
 */
export interface ThrottlePolicy {
  initialPauseMs: number;
  maxPauseMs: number;
}

export const DEFAULT_THROTTLE_POLICY: ThrottlePolicy = { initialPauseMs: 1_000, maxPauseMs: 30_000 };

export class BindThrottle {
  private level = 0;
  private pausedUntilMs = 0;

  constructor(private readonly policy: ThrottlePolicy = DEFAULT_THROTTLE_POLICY) {}

  /** The SMSC asked us to slow down: returns how long the bind pauses (the part's retryAfterMs). */
  onSlowDown(nowMs: number): number {
    const pauseMs = Math.min(this.policy.maxPauseMs, this.policy.initialPauseMs * 2 ** Math.min(this.level, 20));
    this.level++;
    this.pausedUntilMs = Math.max(this.pausedUntilMs, nowMs + pauseMs);
    return pauseMs;
  }

  /** A submit was accepted: step back toward full speed. */
  onAccepted(): void {
    if (this.level > 0) this.level--;
  }

  /** 0 when the bind may send now, else the ms it must still wait. */
  pauseRemainingMs(nowMs: number): number {
    return Math.max(0, this.pausedUntilMs - nowMs);
  }

  /** How many doublings the bind is backed off (0 = full speed); exposed for state details and tests. */
  get slowDownLevel(): number {
    return this.level;
  }
}
