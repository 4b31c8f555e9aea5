/**
 * Matches SMS-STATUS-REPORTs to the parts they are about. A modem only gives back TP-MR
 * (0..255, wrapping: TS 23.040 §9.2.3.6) and the recipient (TP-RA), and TP-MR is counted per
 * modem, so the key is (device, TP-MR, recipient), kept for a time window. Pure: time is an input.
 */

export interface MatcherEntry {
  messageId: string;
  recipient: string;
  expiresAtMs: number;
}

/** Below this many digits a suffix match is too weak to trust. */
const MIN_SUFFIX_DIGITS = 7;

function digitsOf(address: string): string {
  return address.replace(/^\+/, '');
}

/** Same number, allowing for a report that gives it in national form (TON unknown/national). */
function sameRecipient(a: string, b: string): boolean {
  if (a === b) return true;
  const [shorter, longer] = a.length <= b.length ? [a, b] : [b, a];
  return shorter.length >= MIN_SUFFIX_DIGITS && longer.endsWith(shorter.replace(/^0+/, ''));
}

export class ReceiptMatcher {
  private readonly entries = new Map<string, MatcherEntry[]>();
  private count = 0;

  /**
   * @param windowMs how long an entry waits for its report
   * @param maxEntries bound on remembered parts; beyond it the oldest are dropped (and counted)
   */
  constructor(
    private readonly windowMs: number,
    private readonly maxEntries = 200_000,
  ) {}

  /** Entries dropped because maxEntries was reached before they expired. */
  evictedCount = 0;

  get size(): number {
    return this.count;
  }

  remember(device: string, messageReference: number, recipient: string, messageId: string, nowMs: number): void {
    const key = `${device}\u0000${messageReference}`;
    const digits = digitsOf(recipient);
    // The same (device, MR, recipient) again means the MR wrapped: the older entry can no longer be told apart.
    const list = (this.entries.get(key) ?? []).filter((e) => {
      const keep = e.recipient !== digits && e.expiresAtMs > nowMs;
      if (!keep) this.count--;
      return keep;
    });
    list.push({ messageId, recipient: digits, expiresAtMs: nowMs + this.windowMs });
    this.entries.set(key, list);
    this.count++;
    if (this.count > this.maxEntries) this.evictOldest(nowMs);
  }

  /** The message id for a report, or null; a final report should be followed by forget(). */
  match(device: string, messageReference: number, recipient: string, nowMs: number): string | null {
    const list = this.entries.get(`${device}\u0000${messageReference}`);
    if (list === undefined) return null;
    const digits = digitsOf(recipient);
    const live = list.filter((e) => e.expiresAtMs > nowMs);
    const found = live.find((e) => e.recipient === digits) ?? live.find((e) => sameRecipient(e.recipient, digits));
    return found?.messageId ?? null;
  }

  forget(device: string, messageReference: number, messageId: string): void {
    const key = `${device}\u0000${messageReference}`;
    const list = this.entries.get(key);
    if (list === undefined) return;
    const rest = list.filter((e) => e.messageId !== messageId);
    this.count -= list.length - rest.length;
    if (rest.length === 0) this.entries.delete(key);
    else this.entries.set(key, rest);
  }

  /** Drops expired entries; returns how many. */
  prune(nowMs: number): number {
    let dropped = 0;
    for (const [key, list] of this.entries) {
      const live = list.filter((e) => e.expiresAtMs > nowMs);
      dropped += list.length - live.length;
      if (live.length === 0) this.entries.delete(key);
      else if (live.length !== list.length) this.entries.set(key, live);
    }
    this.count -= dropped;
    return dropped;
  }

  private evictOldest(nowMs: number): void {
    this.prune(nowMs);
    while (this.count > this.maxEntries) {
      let oldestKey: string | null = null;
      let oldestAt = Infinity;
      for (const [key, list] of this.entries) {
        const first = list[0];
        if (first !== undefined && first.expiresAtMs < oldestAt) {
          oldestAt = first.expiresAtMs;
          oldestKey = key;
        }
      }
      if (oldestKey === null) return;
      const list = this.entries.get(oldestKey) ?? [];
      list.shift();
      if (list.length === 0) this.entries.delete(oldestKey);
      this.count--;
      this.evictedCount++;
    }
  }
}
