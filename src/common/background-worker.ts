/**
 * One background loop: runs `pass` again and again until stopped, sleeping between passes on an
 * injected Clock. Contract:
 * - start() runs the first pass at once (in a microtask); a second start() is an error.
 * - After a pass that returns 'more', the next pass runs after one turn of the event loop
 *   (setImmediate, real time: it yields to I/O, it does not wait for the schedule). After any other
 *   result the worker sleeps intervalMs() on the clock, or until wake().
 * - wake() ends the current sleep at once; a wake() that comes while a pass runs is remembered, so
 *   the next sleep ends at once (work announced during a pass is never missed).
 * - wakeAt(atMs) asks for a pass no later than clock time atMs (a retry falling due): a sleep running
 *   is shortened to end then if it would end later; asked during a pass, it bounds the next sleeps.
 *   Only the earliest such time is kept, and any pass that starts at or after it answers it.
 * - keepScheduleOnWake (the webhook sender): a wake() runs an extra pass but does not postpone the
 *   timed one; the sleep after a woken pass ends at the earlier of the sleep it cut short and
 *   intervalMs from now. So a loop woken more often than intervalMs still has its timed pass once
 *   per interval (the sender's poll that finds rows another process queued). Default: off, each
 *   sleep lasts intervalMs from the end of the pass before it.
 * - duePassInTimer (the webhook sender): a 'due' pass starts inside the clock's timer callback, and
 *   if it returns synchronously (not 'more') the next sleep's timer is set before that callback
 *   returns, so a test stepping a manual clock sees the pass's effects and the next timer at once.
 *   Default: off, the pass starts a microtask after the timer.
 * - Each pass is told why it runs: 'start', 'more' (the pass before returned 'more'), 'due' (the
 *   clock reached the time set by intervalMs or wakeAt) or 'woken' (by wake(), before that time).
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

/** Why a pass runs (see the contract above). */
export type PassCause = 'start' | 'more' | 'due' | 'woken';

export interface BackgroundWorkerOptions {
  /** One pass of the loop's work. */
  pass: (cause: PassCause) => PassResult | Promise<PassResult>;
  /** The sleep between passes, read before each sleep (so a backoff can grow). */
  intervalMs: number | (() => number);
  /** Default: the system clock. */
  clock?: Clock;
  /** A pass that threw (default: ignored; loops log through their own FailureLog). */
  onError?: (err: unknown) => void;
  /** A wake() does not postpone the timed pass (see the contract above). Default false. */
  keepScheduleOnWake?: boolean;
  /**
   * A 'due' pass starts inside the clock's timer callback rather than a microtask later (the webhook
   * sender: a test stepping its clock sees the requests of that pass started when advanceTo returns).
   * Default false.
   */
  duePassInTimer?: boolean;
}

/** A sleep in progress: its timer, when it ends, and how to end it. */
interface Sleeping {
  timer: ClockTimer | undefined;
  endsAtMs: number;
  resolve: (next: NextPass) => void;
}

/** What ended a sleep; `ran` when the pass already started in the timer (duePassInTimer). */
interface NextPass {
  cause: PassCause;
  ran?: Promise<PassResult>;
}

export class BackgroundWorker {
  private readonly clock: Clock;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private pendingWake = false;
  private sleeping: Sleeping | undefined;
  /** The earliest wakeAt() not yet answered by a pass (Infinity: none). */
  private wakeAtMs = Number.POSITIVE_INFINITY;
  /** With keepScheduleOnWake: when the timed pass is due (Infinity: set at the next sleep). */
  private scheduledAtMs = Number.POSITIVE_INFINITY;

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
    if (sleeping.timer !== undefined) this.clock.clearTimer(sleeping.timer);
    sleeping.resolve({ cause: 'woken' });
  }

  /** Ensures a pass starts no later than clock time atMs (earlier requests win). */
  wakeAt(atMs: number): void {
    if (atMs >= this.wakeAtMs) return;
    this.wakeAtMs = atMs;
    const sleeping = this.sleeping;
    if (sleeping === undefined || atMs >= sleeping.endsAtMs) return;
    if (sleeping.timer !== undefined) this.clock.clearTimer(sleeping.timer);
    this.arm(sleeping, atMs);
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
    let next: NextPass = { cause: 'start' };
    while (!this.stopped) {
      let result: PassResult;
      try {
        result = await (next.ran ?? this.callPass(next.cause));
      } catch (err) {
        this.options.onError?.(err);
        result = 'idle';
      }
      if (this.stopped) break;
      if (result === 'more') {
        await new Promise<void>((resolve) => setImmediate(resolve));
        next = { cause: 'more' };
      } else {
        next = await this.sleep();
      }
    }
  }

  /** Calls pass now; a synchronous throw counts as 'idle' (a rejection is the caller's to catch). */
  private callPass(cause: PassCause): PassResult | Promise<PassResult> {
    const nowMs = this.clock.now();
    const actual = cause === 'woken' && nowMs >= Math.min(this.wakeAtMs, this.scheduledAtMs) ? 'due' : cause;
    // This pass answers every time asked for up to now.
    if (nowMs >= this.wakeAtMs) this.wakeAtMs = Number.POSITIVE_INFINITY;
    if (nowMs >= this.scheduledAtMs) this.scheduledAtMs = Number.POSITIVE_INFINITY;
    try {
      return this.options.pass(actual);
    } catch (err) {
      this.options.onError?.(err);
      return 'idle';
    }
  }

  private settle(result: PassResult | Promise<PassResult>): Promise<PassResult> {
    return Promise.resolve(result).catch((err: unknown) => {
      this.options.onError?.(err);
      return 'idle' as const;
    });
  }

  private sleep(): Promise<NextPass> {
    if (this.pendingWake) {
      this.pendingWake = false;
      return Promise.resolve({ cause: 'woken' });
    }
    return new Promise((resolve) => this.beginSleep({ timer: undefined, endsAtMs: 0, resolve }));
  }

  private beginSleep(sleeping: Sleeping): void {
    const { intervalMs } = this.options;
    const intervalEndsAtMs = this.clock.now() + (typeof intervalMs === 'number' ? intervalMs : intervalMs());
    // Without keepScheduleOnWake the timed pass is always an interval after the last pass.
    this.scheduledAtMs = this.options.keepScheduleOnWake === true ? Math.min(this.scheduledAtMs, intervalEndsAtMs) : intervalEndsAtMs;
    this.sleeping = sleeping;
    this.arm(sleeping, Math.min(this.scheduledAtMs, this.wakeAtMs));
  }

  /** (Re)sets the sleep's timer to end it at clock time atMs. */
  private arm(sleeping: Sleeping, atMs: number): void {
    sleeping.endsAtMs = atMs;
    sleeping.timer = this.clock.setTimer(() => this.sleepEnded(sleeping), atMs - this.clock.now());
  }

  private sleepEnded(sleeping: Sleeping): void {
    if (this.sleeping === sleeping) this.sleeping = undefined;
    if (this.options.duePassInTimer !== true || this.stopped) {
      sleeping.resolve({ cause: 'due' });
      return;
    }
    const result = this.callPass('due');
    if (result instanceof Promise || result === 'more' || this.stopped) {
      sleeping.resolve({ cause: 'due', ran: this.settle(result) });
    } else if (this.pendingWake) {
      this.pendingWake = false;
      sleeping.resolve({ cause: 'woken' });
    } else {
      // A synchronous pass: the sleep goes on, its next timer set before this timer returns.
      this.beginSleep(sleeping);
    }
  }
}
