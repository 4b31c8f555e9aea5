/**
 * A client's send rate as a generic cell rate algorithm (GCRA, ITU-T I.371's virtual scheduling
 * form): the only state is the theoretical arrival time (TAT) of the client's next part, so one
 * integer per client in client_send_rates holds the whole limiter, and any node reading it under
 * the claim's lock spends the same allowance once. Pure arithmetic (time is a parameter), used by
 * the claim planner on both backends.
 *
 * With a rate of r parts a second the emission interval is T = 1 s / r. A part conforms while the
 * TAT is at most (B - 1) x T ahead of now, B being the burst: one second's worth (r, at least 1).
 * So an idle client may take B parts at once, and over any span of W seconds at most r x W + B.
 */

/** A rated client's limiter as client_send_rates holds it. */
export interface SendRateState {
  partsPerSecond: number;
  /** The TAT: when the client's next part is due, microseconds since the epoch (0: never sent). */
  nextPartAtUs: number;
}

const MICROS_PER_SECOND = 1_000_000;

/** How many parts an idle client may take at once: one second's worth, at least 1. */
export function burstOf(partsPerSecond: number): number {
  return Math.max(1, Math.floor(partsPerSecond));
}

/**
 * How many parts the client may take at `nowMs`: from 0 (its TAT is a whole burst ahead) to its
 * burst (idle since at least a second). A rate of 0 or less takes nothing (the client is paused).
 */
export function partsAllowed(state: SendRateState, nowMs: number): number {
  if (!(state.partsPerSecond > 0)) return 0;
  const nowUs = nowMs * 1_000;
  const aheadUs = Math.max(0, state.nextPartAtUs - nowUs);
  // A part k (1-based) conforms while aheadUs + (k - 1) x T <= (B - 1) x T, i.e. k <= B - aheadUs / T.
  const behind = Math.ceil((aheadUs * state.partsPerSecond) / MICROS_PER_SECOND);
  return Math.max(0, burstOf(state.partsPerSecond) - behind);
}

/**
 * The TAT after the client took `parts` at `nowMs`: from now (or the TAT, if later) one emission
 * interval per part, rounded up to the microsecond so rounding never lets a part through early.
 */
export function advancedTo(state: SendRateState, parts: number, nowMs: number): number {
  const fromUs = Math.max(state.nextPartAtUs, nowMs * 1_000);
  if (parts <= 0 || !(state.partsPerSecond > 0)) return fromUs;
  return fromUs + Math.ceil((parts * MICROS_PER_SECOND) / state.partsPerSecond);
}
