/**
 * Concurrent sliced jobs take turns of the event loop (src/common/loop-turns.ts): libuv
 * accepts one new connection per turn, so a turn must hold one job's slice, not one of every job's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TURN_BUDGET_MS, yieldToEventLoop } from '../../src/common/loop-turns.js';

/** Counts loop turns: a setImmediate chain runs once per turn (in its check phase). */
function turnCounter(): { turn: () => number; stop: () => void } {
  let turn = 0;
  let stopped = false;
  const tick = (): void => {
    if (stopped) return;
    turn++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return { turn: () => turn, stop: () => { stopped = true; } };
}

/** Holds the loop for longer than a turn's budget, as a slice of a 60 MiB body can. */
function busyPastBudget(): void {
  const until = performance.now() + TURN_BUDGET_MS + 1;
  while (performance.now() < until) { /* a slice of work */ }
}

let counter: ReturnType<typeof turnCounter> | undefined;
afterEach(() => counter?.stop());

describe('yieldToEventLoop', () => {
  it('runs one slice per turn across four concurrent jobs whose slices exceed the budget', async () => {
    counter = turnCounter();
    const slicesPerTurn = new Map<number, number>();
    const job = async (): Promise<void> => {
      for (let slice = 0; slice < 10; slice++) {
        busyPastBudget();
        const turn = counter!.turn();
        slicesPerTurn.set(turn, (slicesPerTurn.get(turn) ?? 0) + 1);
        await yieldToEventLoop();
      }
    };
    await Promise.all([job(), job(), job(), job()]);
    expect([...slicesPerTurn.values()].reduce((a, b) => a + b, 0)).toBe(40);
    // The first slice of each job runs before its first yield, all in the starting turn.
    const afterStart = [...slicesPerTurn].filter(([turn]) => turn > 0).map(([, slices]) => slices);
    expect(Math.max(...afterStart)).toBe(1);
  });

  it('lets a lone job go on within the budget without a turn per slice', async () => {
    counter = turnCounter();
    const start = counter.turn();
    // 100 slices that cost next to nothing: a turn each would be 100 turns; within the budget they
    // share a few (more only if this process is descheduled past TURN_BUDGET_MS meanwhile).
    for (let slice = 0; slice < 100; slice++) await yieldToEventLoop();
    expect(counter.turn() - start).toBeLessThan(20);
  });
});
