/**
 * The time the webhook sender runs on: every stored time, retry due time, breaker window and redrive
 * probe is read from and scheduled on this clock. Injected so a test can step through the spec's
 * 2/4/8 s retries and 30 s breaker windows without waiting for them (STYLE rule 1). Batching timers
 * (result flushes) and stop()'s bound stay on real time: they are about I/O, not the schedule.
 * It is the one Clock of src/common/clock.ts, under the names the sender has always exported.
 */
import { systemClock, type Clock, type ClockTimer } from '../common/clock.js';

export type WebhookClock = Clock;
export type WebhookTimer = ClockTimer;

/** Date.now and setTimeout; `now` may be replaced (the sender's older `now` option). */
export const systemWebhookClock: (now?: () => number) => WebhookClock = systemClock;
