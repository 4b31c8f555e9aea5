/**
 * The parts waiting for a modem, shared by every device of a transport: each device takes the
 * next part when its own rate allows, so faster devices take more, and a device that drops
 * leaves its waiting parts to the others (they were never bound to it).
 */
import type { Clock } from '../../common/clock.js';
import type { PartOutcome } from '../transport.js';

export interface QueuedPart {
  messageKey: string;
  destination: string;
  /** 1-based part number and the whole message's part count. */
  sequence: number;
  total: number;
  hex: string;
  tpduOctets: number;
  /** Not to be taken before this time. */
  notBeforeMs: number;
  resolve(outcome: PartOutcome): void;
}

export class PartQueue {
  private items: QueuedPart[] = [];
  private readonly wakers = new Set<() => void>();

  /** `clock` times wait(): the transport's clock. */
  constructor(private readonly clock: Clock) {}

  get length(): number {
    return this.items.length;
  }

  push(part: QueuedPart): void {
    this.items.push(part);
    this.wake();
  }

  /** Puts a part back at the head (a device lost it before sending). */
  pushFront(part: QueuedPart): void {
    this.items.unshift(part);
    this.wake();
  }

  /** The first part that may go now, removed from the queue. */
  take(nowMs: number): QueuedPart | undefined {
    const index = this.items.findIndex((p) => p.notBeforeMs <= nowMs);
    if (index === -1) return undefined;
    return this.items.splice(index, 1)[0];
  }

  /** When the earliest delayed part becomes ready, or null when the queue is empty. */
  nextReadyAtMs(): number | null {
    let earliest: number | null = null;
    for (const p of this.items) if (earliest === null || p.notBeforeMs < earliest) earliest = p.notBeforeMs;
    return earliest;
  }

  /** Resolves on the next push or after maxWaitMs, whichever comes first. */
  wait(maxWaitMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.clock.clearTimer(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = this.clock.setTimer(done, Math.max(0, maxWaitMs));
      this.wakers.add(done);
    });
  }

  /** Removes and returns every part (transport down or stopping). */
  drainAll(): QueuedPart[] {
    const all = this.items;
    this.items = [];
    return all;
  }

  /** Wakes every waiting device (state changes, stop). */
  wake(): void {
    for (const waker of [...this.wakers]) waker();
  }
}
