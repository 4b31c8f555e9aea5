/**
 * One queue of event-loop turns shared by every job that works in slices: the parse, validation
 * and storage of large request bodies and the processing of their campaigns.
 *
 * Why not one `setImmediate` per job: libuv accepts at most one new connection per loop turn (its
 * uv__server_io calls accept4 once per readiness event; strace of the gateway under four 60 MiB
 * uploads showed exactly one accept4 per turn). So the rate at which the gateway takes new
 * connections is its turn rate. With every job yielding on its own `setImmediate`, each turn ran
 * one slice of every concurrent job: turns of ~20 ms (loop delay still low), 50 accepts/s, and a
 * load balancer's `/health` check on a new connection every 10 ms waited in the kernel's accept
 * queue for up to 11 s. Here the jobs wait in one queue instead: each turn resumes one waiting job,
 * which may go on with further slices until TURN_BUDGET_MS of the turn is spent, then queues again
 * behind the others. A turn then holds about one budget of sliced work however many jobs run.
 */
import { performance } from 'node:perf_hooks';

/** Sliced work one turn may run before the job yields for good (a slice started may overrun it). */
export const TURN_BUDGET_MS = 2;

const waiting: Array<() => void> = [];
let turnScheduled = false;
let turnStartedMs = Number.NEGATIVE_INFINITY;

/**
 * Resolves in a later loop turn, in order with every other job yielding here, unless the turn in
 * which the caller was resumed still has budget left (then at once, without a turn of its own).
 */
export function yieldToEventLoop(): Promise<void> {
  if (waiting.length === 0 && performance.now() - turnStartedMs < TURN_BUDGET_MS) return Promise.resolve();
  return new Promise((resolve) => {
    waiting.push(resolve);
    scheduleTurn();
  });
}

function scheduleTurn(): void {
  if (turnScheduled || waiting.length === 0) return;
  turnScheduled = true;
  // Queued from inside runTurn (the check phase), this runs in the next turn, after its poll phase.
  setImmediate(runTurn);
}

function runTurn(): void {
  turnScheduled = false;
  turnStartedMs = performance.now();
  waiting.shift()?.();
  scheduleTurn();
}
