/**
 * A clock a test steps by hand, for code that takes its time and timers as an input (the Clock of
 * src/common/clock.ts: background workers, the webhook sender). Nothing moves until the test calls advanceTo/advanceToNextTimer; timers
 * due by then run in due order, each with now() at its own due time.
 */
import type { Clock, ClockTimer } from '../../src/common/clock.js';

interface ManualTimer extends ClockTimer {
  id: number;
}

interface Pending {
  atMs: number;
  seq: number;
  fn: () => void;
}

export class ManualClock implements Clock {
  private nowMs: number;
  private seq = 0;
  private readonly timers = new Map<number, Pending>();

  constructor(startMs: number) {
    this.nowMs = startMs;
  }

  now(): number {
    return this.nowMs;
  }

  setTimer(fn: () => void, delayMs: number): ClockTimer {
    const id = ++this.seq;
    this.timers.set(id, { atMs: this.nowMs + Math.max(0, delayMs), seq: id, fn });
    const timer: ManualTimer = { clockTimer: true, id };
    return timer;
  }

  clearTimer(timer: ClockTimer): void {
    this.timers.delete((timer as ManualTimer).id);
  }

  /** How many timers are set (a background worker asleep holds one). */
  pendingTimers(): number {
    return this.timers.size;
  }

  /** The due time of the soonest timer, or null when none is set. */
  nextTimerAtMs(): number | null {
    let next: number | null = null;
    for (const t of this.timers.values()) if (next === null || t.atMs < next) next = t.atMs;
    return next;
  }

  /** Moves to targetMs, running every timer due by then (also those set by a timer that ran). */
  advanceTo(targetMs: number): void {
    if (targetMs < this.nowMs) throw new RangeError(`the clock does not go back: ${targetMs} < ${this.nowMs}`);
    for (;;) {
      let due: [number, Pending] | null = null;
      for (const entry of this.timers) {
        const t = entry[1];
        if (t.atMs <= targetMs && (due === null || t.atMs < due[1].atMs || (t.atMs === due[1].atMs && t.seq < due[1].seq))) due = entry;
      }
      if (due === null) break;
      this.timers.delete(due[0]);
      this.nowMs = Math.max(this.nowMs, due[1].atMs);
      due[1].fn();
    }
    this.nowMs = targetMs;
  }

  /** Moves to the soonest timer and runs it (and any due at the same time); returns the new time. */
  advanceToNextTimer(): number {
    const next = this.nextTimerAtMs();
    if (next === null) throw new Error('no timer is set: nothing would ever happen');
    this.advanceTo(Math.max(next, this.nowMs));
    return this.nowMs;
  }
}
