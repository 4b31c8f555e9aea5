/**
 * A route's send window (config `routes[].window`): local wall-clock times in an IANA time zone,
 * "from" inclusive, "to" exclusive; "from" after "to" spans midnight (21:00-08:00). Outside it the
 * route's parts wait queued and go out when it opens. The opening is resolved in the window's zone
 * as `sendAt` is (localToUtcMs: a time that does not exist on a spring-forward day moves forward
 * by the gap, one that happens twice takes its first occurrence). Pure: time is a parameter.
 */
import { DateTime } from 'luxon';
import { localToUtcMs } from '../campaigns/send-at.js';
import type { RouteWindowConfig } from '../config/types.js';

export interface SendWindow {
  /** Minutes after local midnight. */
  fromMinute: number;
  toMinute: number;
  timeZone: string;
}

export type WindowState = { open: true } | { open: false; opensAtMs: number };

export function sendWindowOf(config: RouteWindowConfig): SendWindow {
  return { fromMinute: minuteOfDay(config.from), toMinute: minuteOfDay(config.to), timeZone: config.timeZone };
}

/** Whether the window is open at `nowMs`, and when not, the next instant it opens. */
export function windowState(window: SendWindow, nowMs: number): WindowState {
  const local = DateTime.fromMillis(nowMs, { zone: window.timeZone });
  const minute = local.hour * 60 + local.minute;
  if (isInside(window, minute)) return { open: true };
  // Closed: the next opening is today's "from" if it is still ahead, else tomorrow's.
  for (let days = 0; days <= 2; days++) {
    const day = local.startOf('day').plus({ days });
    const opensAtMs = localToUtcMs({ year: day.year, month: day.month, day: day.day, hour: Math.floor(window.fromMinute / 60), minute: window.fromMinute % 60 }, window.timeZone);
    if (opensAtMs > nowMs) return { open: false, opensAtMs };
  }
  // Unreachable for a valid zone: two days ahead always holds an opening.
  return { open: false, opensAtMs: nowMs + 86_400_000 };
}

function isInside(window: SendWindow, minute: number): boolean {
  const { fromMinute: from, toMinute: to } = window;
  return from < to ? minute >= from && minute < to : minute >= from || minute < to;
}

function minuteOfDay(clock: string): number {
  const [hours, minutes] = clock.split(':').map(Number) as [number, number];
  return hours * 60 + minutes;
}
