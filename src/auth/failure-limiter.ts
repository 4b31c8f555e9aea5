/**
 * Brute-force brake for the token endpoints: failed attempts are counted per key (a username, a
 * client address) in a sliding window. Once a key has `maxFailures` failures inside the window it
 * is limited until the oldest of them leaves the window. Pure: time comes in as `nowMs`.
 *
 * Memory is bounded: each key keeps at most `maxFailures` timestamps, and at most `maxKeys` keys are
 * tracked (the least recently failed is forgotten first).
 */
export type LimitCheck = { limited: false } | { limited: true; retryAfterMs: number };

export interface FailureLimiterOptions {
  windowMs: number;
  maxFailures: number;
  maxKeys?: number;
}

export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();
  private readonly maxKeys: number;

  constructor(private readonly options: FailureLimiterOptions) {
    this.maxKeys = options.maxKeys ?? 100_000;
  }

  check(key: string, nowMs: number): LimitCheck {
    const recent = this.recent(key, nowMs);
    if (recent.length < this.options.maxFailures) return { limited: false };
    // recent holds the last maxFailures failures; the key frees up when the oldest expires.
    const oldest = recent[0] as number;
    return { limited: true, retryAfterMs: Math.max(1, oldest + this.options.windowMs - nowMs) };
  }

  recordFailure(key: string, nowMs: number): void {
    const recent = this.recent(key, nowMs);
    recent.push(nowMs);
    if (recent.length > this.options.maxFailures) recent.splice(0, recent.length - this.options.maxFailures);
    // Re-inserting moves the key to the end of the Map's order: eviction takes the stalest first.
    this.failures.delete(key);
    this.failures.set(key, recent);
    while (this.failures.size > this.maxKeys) {
      const stalest = this.failures.keys().next().value as string;
      this.failures.delete(stalest);
    }
  }

  reset(key: string): void {
    this.failures.delete(key);
  }

  /** Failures of `key` still inside the window (expired ones are dropped). */
  private recent(key: string, nowMs: number): number[] {
    const list = this.failures.get(key);
    if (list === undefined) return [];
    const fresh = list.filter((at) => at > nowMs - this.options.windowMs);
    if (fresh.length === 0) this.failures.delete(key);
    else if (fresh.length !== list.length) this.failures.set(key, fresh);
    return fresh;
  }
}
