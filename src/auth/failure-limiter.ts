/**
 * Brute-force brake for the token endpoints: attempts are counted per key (a username, a client
 * address) in a sliding window. An attempt is counted when it starts, before any password-hash
 * work, so concurrent guesses cannot all pass the check while the first ones are still hashing
 * (60 concurrent guesses against a limit of 10 all reached the hash when only
 * failures were counted, after it). A successful attempt is given back (`release`); a failed one
 * stays counted until it leaves the window. Once a key has `maxFailures` attempts inside the window
 * it is limited until the oldest of them leaves it. Pure: time comes in as `nowMs`.
 *
 * Memory is bounded: each key keeps at most `maxFailures` timestamps, and at most `maxKeys` keys are
 * tracked (the least recently used is forgotten first).
 */
export type LimitCheck = { limited: false } | { limited: true; retryAfterMs: number };

/** An attempt that was counted: give it back with `release` when it succeeds. */
export interface CountedAttempt {
  readonly key: string;
  readonly atMs: number;
}

export type AttemptAdmission = { limited: false; attempt: CountedAttempt } | { limited: true; retryAfterMs: number };

export interface FailureLimiterOptions {
  windowMs: number;
  maxFailures: number;
  maxKeys?: number;
}

export class FailureLimiter {
  private readonly attempts = new Map<string, number[]>();
  private readonly maxKeys: number;

  constructor(private readonly options: FailureLimiterOptions) {
    this.maxKeys = options.maxKeys ?? 100_000;
  }

  check(key: string, nowMs: number): LimitCheck {
    const recent = this.recent(key, nowMs);
    if (recent.length < this.options.maxFailures) return { limited: false };
    // recent holds the last maxFailures attempts; the key frees up when the oldest expires.
    const oldest = recent[0] as number;
    return { limited: true, retryAfterMs: Math.max(1, oldest + this.options.windowMs - nowMs) };
  }

  /** Counts an attempt unless the key is limited; synchronous, so no other request can slip in between. */
  tryAcquire(key: string, nowMs: number): AttemptAdmission {
    const check = this.check(key, nowMs);
    if (check.limited) return check;
    this.recordFailure(key, nowMs);
    return { limited: false, attempt: { key, atMs: nowMs } };
  }

  /** Gives a counted attempt back (it succeeded). Nothing happens when it has already left the window. */
  release(attempt: CountedAttempt): void {
    const list = this.attempts.get(attempt.key);
    if (list === undefined) return;
    const index = list.indexOf(attempt.atMs);
    if (index === -1) return;
    list.splice(index, 1);
    if (list.length === 0) this.attempts.delete(attempt.key);
  }

  recordFailure(key: string, nowMs: number): void {
    const recent = this.recent(key, nowMs);
    recent.push(nowMs);
    if (recent.length > this.options.maxFailures) recent.splice(0, recent.length - this.options.maxFailures);
    // Re-inserting moves the key to the end of the Map's order: eviction takes the stalest first.
    this.attempts.delete(key);
    this.attempts.set(key, recent);
    while (this.attempts.size > this.maxKeys) {
      const stalest = this.attempts.keys().next().value as string;
      this.attempts.delete(stalest);
    }
  }

  reset(key: string): void {
    this.attempts.delete(key);
  }

  /** Attempts of `key` still inside the window (expired ones are dropped). */
  private recent(key: string, nowMs: number): number[] {
    const list = this.attempts.get(key);
    if (list === undefined) return [];
    const fresh = list.filter((at) => at > nowMs - this.options.windowMs);
    if (fresh.length === 0) this.attempts.delete(key);
    else if (fresh.length !== list.length) this.attempts.set(key, fresh);
    return fresh;
  }
}
