/**
 * One background loop: runs `pass` again and again until stopped, sleeping between passes on an
 * injected Clock (issue 10 item 4). Contract:
 * - start() runs the first pass at once (in a microtask); a second start() is an error.
 * - After a pass that returns 'more', the next pass runs after one turn of the event loop
 *   (setImmediate, real time: it yields to I/O, it does not wait for the schedule). After any other
 *   result the worker sleeps intervalMs() on the clock, or until wake().
 * - wake() ends the current sleep at once; a wake() that comes while a pass runs is remembered, so
 *   the next sleep ends at once (work announced during a pass is never missed).
 * - A pass that throws is handed to onError and the worker sleeps as after an idle pass; it never
 *   stops the loop.
 * - stop() stops the loop: no pass starts after it; the pass running (if any) finishes, and the
 *   returned promise settles when it did. stop() is idempotent and safe before start().
 * - Nothing but the clock's timers moves the worker: with a test's manual clock, no pass after the
 *   first happens until the test steps the clock past intervalMs or calls wake().
 */
import { systemClock, type Clock, type ClockTimer } from './clock.js';

/** 'more': work is left, run again soon; 'idle' (or nothing): sleep the interval. */
export type PassResult = 'more' | 'idle' | void;

export interface BackgroundWorkerOptions {
  /** One pass of the loop's work. */
  pass: () => PassResult | Promise<PassResult>;
  /** The sleep between passes, read before each sleep (so a backoff can grow). */
  intervalMs: number | (() => number);
  /** Default: the system clock. */
  clock?: Clock;
  /** A pass that threw (default: ignored; loops log through their own FailureLog). */
  onError?: (err: unknown) => void;
}

export class BackgroundWorker {
  private readonly clock: Clock;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private pendingWake = false;
  private sleeping: { timer: ClockTimer; resolve: () => void } | undefined;

  constructor(private readonly options: BackgroundWorkerOptions) {
    this.clock = options.clock ?? systemClock();
  }

  get running(): boolean {
    return this.loop !== undefined && !this.stopped;
  }

  start(): void {
    if (this.loop !== undefined) throw new Error('background worker already started');
    this.loop = this.run();
  }

  /** New work may be there: end the current sleep (or the next one, if a pass is running). */
  wake(): void {
    const sleeping = this.sleeping;
    if (sleeping === undefined) {
      this.pendingWake = true;
      return;
    }
    this.sleeping = undefined;
    this.clock.clearTimer(sleeping.timer);
    sleeping.resolve();
  }

  /** Settles once the loop has ended (after the pass running, if any). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    // The first pass runs after start() returned, as the loops always did (an async function's body).
    await Promise.resolve();
    while (!this.stopped) {
      let result: PassResult;
      try {
        result = await this.options.pass();
      } catch (err) {
        this.options.onError?.(err);
        result = 'idle';
      }
      if (this.stopped) break;
      if (result === 'more') await new Promise<void>((resolve) => setImmediate(resolve));
      else await this.sleep();
    }
  }

  private sleep(): Promise<void> {
    if (this.pendingWake) {
      this.pendingWake = false;
      return Promise.resolve();
    }
    const { intervalMs } = this.options;
    const delayMs = typeof intervalMs === 'number' ? intervalMs : intervalMs();
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(() => {
        if (this.sleeping?.timer === timer) this.sleeping = undefined;
        resolve();
      }, delayMs);
      this.sleeping = { timer, resolve };
    });
  }
}
