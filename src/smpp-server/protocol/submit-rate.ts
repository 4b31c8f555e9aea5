/**
 * submit_sm a second over the last 10 s of one session, for the status page: ten one-second
 * buckets, so recording is O(1) and nothing grows with the traffic. Time is given by the caller.
 */
export const SUBMIT_RATE_WINDOW_MS = 10_000;
const BUCKET_MS = 1_000;
const BUCKETS = SUBMIT_RATE_WINDOW_MS / BUCKET_MS;

export class SubmitRate {
  private readonly counts = new Array<number>(BUCKETS).fill(0);
  /** The second (nowMs / 1000, floored) each bucket currently counts. */
  private readonly seconds = new Array<number>(BUCKETS).fill(-1);

  record(nowMs: number): void {
    const second = Math.floor(nowMs / BUCKET_MS);
    const index = second % BUCKETS;
    if (this.seconds[index] !== second) {
      this.seconds[index] = second;
      this.counts[index] = 0;
    }
    this.counts[index]! += 1;
  }

  /** The mean over the ten seconds ending with the current one (a session younger than that is averaged over ten all the same). */
  perSecond(nowMs: number): number {
    const current = Math.floor(nowMs / BUCKET_MS);
    let total = 0;
    for (let i = 0; i < BUCKETS; i++) {
      const second = this.seconds[i]!;
      if (second > current - BUCKETS && second <= current) total += this.counts[i]!;
    }
    return total / BUCKETS;
  }
}
