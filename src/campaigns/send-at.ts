/**
 * sendAt: a wall-clock time in Irish local time (SPEC.md "Scheduling"), turned into an instant.
 * Pure: no clock, no I/O.
 */
import { IANAZone } from 'luxon';
import { isCalendarDate, isTimeOfDay } from '../common/calendar.js';

/** SPEC.md Scheduling rule 2. No zone designator or offset can match it (rule 4). */
export const SEND_AT_PATTERN = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/;

/** SPEC.md Scheduling rule 1: always Europe/Dublin, never the caller's, server's or recipient's zone. */
export const SEND_AT_ZONE = 'Europe/Dublin';

const MS_PER_MINUTE = 60_000;
const MS_PER_DAY = 86_400_000;

export interface LocalMinute {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

export type SendAtParse = { ok: true; local: LocalMinute } | { ok: false; reason: string };

/**
 * Checks the pattern and that the date and time exist on the calendar (2026-02-30 and 24:00 do not).
 * Seconds are checked (0-59) and then dropped: SPEC.md rule 3 normalises to the start of the minute.
 */
export function parseSendAt(raw: string): SendAtParse {
  const match = SEND_AT_PATTERN.exec(raw);
  if (match === null) {
    return { ok: false, reason: 'must be a local time yyyy-MM-ddTHH:mm[:ss] without a zone or offset' };
  }
  const [year, month, day, hour, minute] = match.slice(1, 6).map(Number) as [number, number, number, number, number];
  const second = match[6] === undefined ? 0 : Number(match[6]);
  if (!isCalendarDate(year, month, day)) return { ok: false, reason: 'is not a real calendar date' };
  if (!isTimeOfDay(hour, minute, second)) return { ok: false, reason: 'is not a real time of day' };
  return { ok: true, local: { year, month, day, hour, minute } };
}

/** Whether luxon knows `name` as an IANA time zone (config `scheduling.timeZone`). */
export function isValidTimeZone(name: string): boolean {
  return IANAZone.isValidZone(name);
}

/** The instant of a Europe/Dublin wall-clock minute (SPEC.md Scheduling rule 1). */
export function dublinLocalToUtcMs(local: LocalMinute): number {
  return localToUtcMs(local, SEND_AT_ZONE);
}

/**
 * The instant (ms since epoch) of a wall-clock minute in `zoneName` (an IANA zone; SEND_AT_ZONE unless
 * the deployment sets `scheduling.timeZone`).
 * - Ambiguous (autumn, the hour that happens twice): the first occurrence, i.e. the larger offset.
 * - Non-existent (spring gap): moved forward by the gap's length (01:30 on the last Sunday of March
 *   becomes 02:30 IST), like reading the wall time with the offset in force before the change.
 * luxon's own fromObject resolves both cases from a guess based on today's offset, so the result
 * would change with the season the server runs in; hence the explicit resolution here.
 */
export function localToUtcMs(local: LocalMinute, zoneName: string): number {
  const zone = IANAZone.create(zoneName);
  if (!zone.isValid) throw new Error(`unknown time zone '${zoneName}'`);
  const wallAsUtcMs = wallClockAsUtcMs(local);
  // A transition is at most one per day here, so the offsets a day either side bound the candidates.
  const offsetBeforeMin = zone.offset(wallAsUtcMs - MS_PER_DAY);
  const offsetAfterMin = zone.offset(wallAsUtcMs + MS_PER_DAY);
  const candidates = [...new Set([offsetBeforeMin, offsetAfterMin])]
    .map((offsetMin) => ({ offsetMin, instantMs: wallAsUtcMs - offsetMin * MS_PER_MINUTE }))
    .filter((c) => zone.offset(c.instantMs) === c.offsetMin)
    .map((c) => c.instantMs);
  if (candidates.length > 0) return Math.min(...candidates);
  return wallAsUtcMs - offsetBeforeMin * MS_PER_MINUTE;
}

/** Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not. */
function wallClockAsUtcMs(local: LocalMinute): number {
  const date = new Date(0);
  date.setUTCFullYear(local.year, local.month - 1, local.day);
  date.setUTCHours(local.hour, local.minute, 0, 0);
  return date.getTime();
}
