/**
 * The time the webhook sender runs on: every stored time, retry due time, breaker window and redrive
 * probe is read from and scheduled on this clock. Injected so a test can step through the spec's
 * 2/4/8 s retries and 30 s breaker windows without waiting for them (STYLE rule 1). Batching timers
 * (result flushes) and stop()'s bound stay on real time: they are about I/O, not the schedule.
 */
export interface WebhookClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls fn once, delayMs from now by this clock. Returns a handle for clearTimer. */
  setTimer(fn: () => void, delayMs: number): WebhookTimer;
  clearTimer(timer: WebhookTimer): void;
}

/** Opaque to the sender: only the clock that made it reads it. */
export interface WebhookTimer {
  readonly webhookTimer: true;
}

interface SystemTimer extends WebhookTimer {
  handle: NodeJS.Timeout;
}

/** Date.now and setTimeout; `now` may be replaced (the sender's older `now` option). */
export function systemWebhookClock(now: () => number = Date.now): WebhookClock {
  return {
    now,
    setTimer(fn, delayMs) {
      const timer: SystemTimer = { webhookTimer: true, handle: setTimeout(fn, Math.max(0, delayMs)) };
      return timer;
    },
    clearTimer(timer) {
      clearTimeout((timer as SystemTimer).handle);
    },
  };
}
