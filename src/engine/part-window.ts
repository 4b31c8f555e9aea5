/**
 * A transport's in-flight window counted in message parts, as SMPP counts it: every submit_sm
 * awaiting its submit_sm_resp holds one slot (SMPP 3.4 §2.7 "window"), so a 3-part message takes
 * three. Waiters are served first in, first out, so a long message is not starved by short ones
 * behind it. A message with more parts than the whole window waits until nothing is in flight and
 * then goes alone (it would otherwise never fit).
 *
 * The size follows the transport (resize): a cluster node's SMPP window is `window` x the bind
 * slots it holds now, so it shrinks when the node gives slots up and is 0 while it holds none.
 * Parts already in flight keep their slots (they are on the wire); nothing new enters until the
 * in-flight count is under the new size, and at size 0 every waiter is turned away (acquire
 * resolves false: the caller hands its parts back unsent).
 */
interface Waiter {
  parts: number;
  resolve: (entered: boolean) => void;
}

export class PartWindow {
  private inFlightParts = 0;
  private readonly waiters: Waiter[] = [];
  private currentSize: number;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`window size must be an integer >= 1, got ${size}`);
    this.currentSize = size;
  }

  get size(): number {
    return this.currentSize;
  }

  get inFlight(): number {
    return this.inFlightParts;
  }

  /**
   * Resolves true once `parts` slots are held (release them with release(parts)), or false when the
   * window is, or shrinks to, 0 before they fit: nothing may be sent now.
   */
  acquire(parts: number): Promise<boolean> {
    if (this.currentSize === 0) return Promise.resolve(false);
    if (this.tryAcquire(parts)) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => this.waiters.push({ parts, resolve }));
  }

  /**
   * Takes `parts` slots now when they fit and nobody waits ahead (true), else takes nothing (false:
   * call acquire to wait). The lane's common case, without a promise and its microtask turn a message.
   */
  tryAcquire(parts: number): boolean {
    if (this.waiters.length !== 0 || !this.fits(parts)) return false;
    this.inFlightParts += parts;
    return true;
  }

  release(parts: number): void {
    this.inFlightParts = Math.max(0, this.inFlightParts - parts);
    this.admit();
  }

  /** A new size (an integer >= 0): growing admits waiters that fit now, 0 turns every waiter away. */
  resize(size: number): void {
    if (!Number.isInteger(size) || size < 0) throw new RangeError(`window size must be an integer >= 0, got ${size}`);
    if (size === this.currentSize) return;
    this.currentSize = size;
    if (size === 0) {
      for (const waiter of this.waiters.splice(0)) waiter.resolve(false);
      return;
    }
    this.admit();
  }

  private admit(): void {
    while (this.waiters.length > 0) {
      const next = this.waiters[0] as Waiter;
      if (!this.fits(next.parts)) break;
      this.waiters.shift();
      this.inFlightParts += next.parts;
      next.resolve(true);
    }
  }

  private fits(parts: number): boolean {
    if (this.currentSize === 0) return false;
    return this.inFlightParts === 0 || this.inFlightParts + parts <= this.currentSize;
  }
}
