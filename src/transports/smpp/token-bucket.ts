/**
 * A token bucket for the carrier's maxPerSecond, shared by all its binds so the carrier sees the
 * configured rate whatever the number of binds. Pure: the caller passes nowMs.
 */
export class TokenBucket {
  private tokens: number;
  private lastRefillMs: number;

  /**
   * @param ratePerSecond tokens added per second
   * @param capacity most tokens held: the largest burst after idling
   */
  constructor(
    readonly ratePerSecond: number,
    private readonly capacity: number,
    nowMs: number,
  ) {
    if (!(ratePerSecond > 0)) throw new RangeError('TokenBucket ratePerSecond must be positive');
    if (!(capacity >= 1)) throw new RangeError('TokenBucket capacity must be at least 1');
    this.tokens = capacity;
    this.lastRefillMs = nowMs;
  }

  /** Burst size for a rate: a tenth of a second's worth, at least 1. */
  static capacityFor(ratePerSecond: number): number {
    return Math.max(1, Math.ceil(ratePerSecond / 10));
  }

  /**
   * The same bucket at another rate (a cluster node's share of the carrier's cap changed): the
   * tokens it holds carry over, up to the new capacity, instead of a full burst. A fresh full bucket
   * at every re-sync added a tenth of a second's sending each time, and nodes re-sync every beat:
   * the cluster sent 10% over its cap.
   */
  retuned(ratePerSecond: number, nowMs: number): TokenBucket {
    this.refill(nowMs);
    const bucket = new TokenBucket(ratePerSecond, TokenBucket.capacityFor(ratePerSecond), nowMs);
    bucket.tokens = Math.min(bucket.capacity, this.tokens);
    return bucket;
  }

  /** Takes one token: returns 0 if one was available, else the ms until one will be (nothing taken). */
  take(nowMs: number): number {
    this.refill(nowMs);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil(((1 - this.tokens) * 1000) / this.ratePerSecond));
  }

  private refill(nowMs: number): void {
    const elapsedMs = nowMs - this.lastRefillMs;
    if (elapsedMs <= 0) return;
    this.tokens = Math.min(this.capacity, this.tokens + (elapsedMs * this.ratePerSecond) / 1000);
    this.lastRefillMs = nowMs;
  }
}
