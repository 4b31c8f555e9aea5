/**
 * A transport's in-flight window counted in message parts, as SMPP counts it: every submit_sm
 * awaiting its submit_sm_resp holds one slot (SMPP 3.4 §2.7 "window"), so a 3-part message takes
 * three. Waiters are served first in, first out, so a long message is not starved by short ones
 * behind it. A message with more parts than the whole window waits until nothing is in flight and
 * then goes alone (it would otherwise never fit).
 */
interface Waiter {
  parts: number;
  resolve: () => void;
}

export class PartWindow {
  private inFlightParts = 0;
  private readonly waiters: Waiter[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`window size must be an integer >= 1, got ${size}`);
  }

  get inFlight(): number {
    return this.inFlightParts;
  }

  /** Resolves once `parts` slots are held; release them with release(parts). */
  acquire(parts: number): Promise<void> {
    if (this.waiters.length === 0 && this.fits(parts)) {
      this.inFlightParts += parts;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.waiters.push({ parts, resolve }));
  }

  release(parts: number): void {
    this.inFlightParts = Math.max(0, this.inFlightParts - parts);
    while (this.waiters.length > 0) {
      const next = this.waiters[0] as Waiter;
      if (!this.fits(next.parts)) break;
      this.waiters.shift();
      this.inFlightParts += next.parts;
      next.resolve();
    }
  }

  private fits(parts: number): boolean {
    return this.inFlightParts === 0 || this.inFlightParts + parts <= this.size;
  }
}
