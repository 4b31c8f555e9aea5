/**
 * Pace checks for "paces parts at maxPerSecond": how many events fall in the busiest window of a
 * given length, from the peer's own timestamps.
 */

/** The most timestamps in any half-open window [t, t + windowMs) that starts at one of them. */
export function mostInAnyWindow(timesMs: readonly number[], windowMs: number): number {
  const sorted = [...timesMs].sort((a, b) => a - b);
  let most = 0;
  let end = 0;
  for (let start = 0; start < sorted.length; start++) {
    while (end < sorted.length && (sorted[end] as number) < (sorted[start] as number) + windowMs) end++;
    most = Math.max(most, end - start);
  }
  return most;
}
