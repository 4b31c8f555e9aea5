/**
 * The time a background loop runs on: its now() and its timers. Injected so a test can step a loop
 * through its poll intervals, retries and backoffs without waiting for them (STYLE rule 1,
 * COMMON "step an injected clock"); the default is the system clock.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls fn once, delayMs from now by this clock. Returns a handle for clearTimer. */
  setTimer(fn: () => void, delayMs: number): ClockTimer;
  clearTimer(timer: ClockTimer): void;
}

/** Opaque to the caller: only the clock that made it reads it. */
export interface ClockTimer {
  readonly clockTimer: true;
}

interface SystemTimer extends ClockTimer {
  handle: NodeJS.Timeout;
}

/** Date.now and setTimeout; `now` may be replaced (older `now` options of the engine and sender). */
export function systemClock(now: () => number = Date.now): Clock {
  return {
    now,
    setTimer(fn, delayMs) {
      const timer: SystemTimer = { clockTimer: true, handle: setTimeout(fn, Math.max(0, delayMs)) };
      return timer;
    },
    clearTimer(timer) {
      clearTimeout((timer as SystemTimer).handle);
    },
  };
}

/**
 * Resolves after `ms` milliseconds by `clock`: waits that run on the clock a component was given
 * (the modem transport's pacing, registration polls and late-answer guard), so a test stepping a
 * manual clock moves them too. On the system clock the timer keeps the process alive, as a pending
 * wait should.
 */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => {
    clock.setTimer(resolve, Math.max(0, ms));
  });
}
