/**
 * Whether a date or a time of day exists on the calendar (the proleptic Gregorian one Date.UTC
 * counts): 2026-02-30 and 24:00 do not. Plain arithmetic, no Date: a receipt's done date is
 * checked here once per receipt on the protocol thread, a campaign's sendAt once per request.
 */

/** Days in a month (1-12) of `year`. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** month 1-12 and day 1 to that month's last day in `year`. */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** hour 0-23, minute 0-59, second 0-59. */
export function isTimeOfDay(hour: number, minute: number, second: number): boolean {
  return hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 && second <= 59;
}
