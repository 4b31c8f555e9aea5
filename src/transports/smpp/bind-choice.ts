/**
 * Which of a carrier's binds takes the next submit: the bound, unpaused bind with a free window
 * slot and the fewest slots in use (the earliest in config order on a tie). The one definition,
 * used for the hot path and for waiting submits alike.
 */
import type { SmppBind } from './smpp-bind.js';

export type BindChoice =
  | { kind: 'bind'; bind: SmppBind }
  /** Bound binds exist but none can take a submit now; pauseMs: the shortest throttle pause left (Infinity: wait for a slot). */
  | { kind: 'wait'; pauseMs: number }
  /** No bind is bound. */
  | { kind: 'none' };

export function chooseBind(binds: readonly SmppBind[], nowMs: number): BindChoice {
  let best: SmppBind | null = null;
  let anyBound = false;
  let shortestPauseMs = Number.POSITIVE_INFINITY;
  for (const candidate of binds) {
    if (candidate.state.state !== 'bound') continue;
    anyBound = true;
    const pauseMs = candidate.throttle.pauseRemainingMs(nowMs);
    if (pauseMs > 0) {
      shortestPauseMs = Math.min(shortestPauseMs, pauseMs);
      continue;
    }
    if (candidate.hasFreeSlot && (best === null || candidate.outstanding < best.outstanding)) best = candidate;
  }
  if (best !== null) return { kind: 'bind', bind: best };
  return anyBound ? { kind: 'wait', pauseMs: shortestPauseMs } : { kind: 'none' };
}
