/**
 * Receipts that arrived before the submit result they belong to was stored (a receipt can beat
 * its submit_sm_resp; Jasmin retries the lookup for the same reason). The engine parks them here,
 * keyed by normalised message id, and takes them when the accepted outcome is recorded.
 *
 * Bounded in both size and age, and pure: the caller passes nowMs. Anything pushed out is
 * returned to the caller (never dropped silently) so it can be logged or stored as unmatched.
 */

export interface PendingReceiptsOptions {
  /** Most receipts held at once; adding one more evicts the oldest. */
  maxEntries: number;
  /** How long a receipt waits for its submit result before it is expired. */
  ttlMs: number;
}

export interface PendingEntry<T> {
  messageId: string;
  receipt: T;
  addedAtMs: number;
}

export class PendingReceipts<T> {
  // Insertion order is age order (callers pass a non-decreasing nowMs), so the oldest entry is
  // always first: expiry and eviction cost O(1) per entry.
  private readonly byAge = new Map<number, PendingEntry<T>>();
  private readonly keysById = new Map<string, number[]>();
  private nextKey = 0;

  constructor(private readonly options: PendingReceiptsOptions) {
    if (!(options.maxEntries >= 1)) throw new RangeError('PendingReceipts maxEntries must be at least 1');
    if (!(options.ttlMs > 0)) throw new RangeError('PendingReceipts ttlMs must be positive');
  }

  get size(): number {
    return this.byAge.size;
  }

  /**
   * Parks a receipt. Several receipts for one id (ENROUTE then DELIVRD) are kept in order.
   * Returns the entries pushed out to make room or because they expired, oldest first.
   */
  add(messageId: string, receipt: T, nowMs: number): PendingEntry<T>[] {
    const pushedOut = this.expire(nowMs);
    const key = this.nextKey++;
    this.byAge.set(key, { messageId, receipt, addedAtMs: nowMs });
    const keys = this.keysById.get(messageId);
    if (keys === undefined) this.keysById.set(messageId, [key]);
    else keys.push(key);
    while (this.byAge.size > this.options.maxEntries) {
      const oldest = this.removeFirst();
      if (oldest === undefined) break;
      pushedOut.push(oldest);
    }
    return pushedOut;
  }

  /** Removes and returns every live receipt parked for the id, oldest first. */
  take(messageId: string, nowMs: number): T[] {
    this.expire(nowMs);
    const keys = this.keysById.get(messageId);
    if (keys === undefined) return [];
    this.keysById.delete(messageId);
    const receipts: T[] = [];
    for (const key of keys) {
      const entry = this.byAge.get(key);
      if (entry === undefined) continue;
      this.byAge.delete(key);
      receipts.push(entry.receipt);
    }
    return receipts;
  }

  /** Removes and returns the entries that are ttlMs old or older, oldest first. */
  expire(nowMs: number): PendingEntry<T>[] {
    const expired: PendingEntry<T>[] = [];
    for (const entry of this.byAge.values()) {
      if (nowMs - entry.addedAtMs < this.options.ttlMs) break;
      expired.push(this.removeFirst()!);
    }
    return expired;
  }

  private removeFirst(): PendingEntry<T> | undefined {
    const first = this.byAge.entries().next();
    if (first.done === true) return undefined;
    const [key, entry] = first.value;
    this.byAge.delete(key);
    const keys = this.keysById.get(entry.messageId);
    if (keys !== undefined) {
      const at = keys.indexOf(key);
      if (at >= 0) keys.splice(at, 1);
      if (keys.length === 0) this.keysById.delete(entry.messageId);
    }
    return entry;
  }
}
