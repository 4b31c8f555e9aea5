/**
 * How a client's send rate is measured at the SMSC in tests: the submits it received for a set of
 * destinations, and the most of them inside any window (sliding, exact). The limiter allows at most
 * rate x W + burst parts in W seconds when they are claimed (src/engine/send-rate.ts); at the SMSC
 * a part arrives a little after its claim, and a loaded machine varies that delay, so the bound
 * checked at the SMSC adds CLAIM_TO_SMSC_JITTER_S seconds' worth of the rate.
 */

/** Seconds of delivery-delay variation between a claim and the SMSC allowed for on a loaded 2-core machine. */
export const CLAIM_TO_SMSC_JITTER_S = 0.5;

/** The most times within any window of windowMs. `timesMs` ascending. */
export function mostWithin(timesMs: readonly number[], windowMs: number): number {
  let best = 0;
  let start = 0;
  for (let end = 0; end < timesMs.length; end++) {
    while ((timesMs[end] as number) - (timesMs[start] as number) >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

/** The most parts a client at `partsPerSecond` may get to the SMSC in `windowMs`: rate x W, its burst (a second's worth), the jitter allowance. */
export function rateBound(partsPerSecond: number, windowMs: number): number {
  return Math.floor(partsPerSecond * (windowMs / 1_000 + CLAIM_TO_SMSC_JITTER_S)) + Math.max(1, partsPerSecond);
}
