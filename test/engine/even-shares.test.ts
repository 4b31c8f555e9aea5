import { describe, expect, it } from 'vitest';
import { evenShares, fillEvenShares } from '../../src/engine/even-shares.js';

/** Drives the rounds with each candidate's supply; returns [candidate, room, used, firstRound] per step. */
function drive(supply: Map<string, number>, budget: number): [string, number, number, boolean][] {
  const steps: [string, number, number, boolean][] = [];
  const shares = evenShares([...supply.keys()], budget);
  for (let share = shares.next(); share.done !== true; ) {
    const { candidate, room, firstRound } = share.value;
    const used = Math.min(room, supply.get(candidate) ?? 0);
    supply.set(candidate, (supply.get(candidate) ?? 0) - used);
    steps.push([candidate, room, used, firstRound]);
    share = shares.next(used);
  }
  return steps;
}

describe('evenShares', () => {
  it('splits the budget evenly and gives what a small candidate leaves to those that filled their share', () => {
    expect(drive(new Map([['large', 1_000], ['small', 1]]), 10)).toEqual([
      ['large', 5, 5, true],
      ['small', 5, 1, true],
      ['large', 4, 4, false],
    ]);
  });

  it('gives each at least 1 when there are more candidates than budget, stopping when the budget is spent', () => {
    expect(drive(new Map([['a', 9], ['b', 9], ['c', 9]]), 2)).toEqual([
      ['a', 1, 1, true],
      ['b', 1, 1, true],
    ]);
  });

  it('ends when every candidate ran dry, budget left or not', () => {
    expect(drive(new Map([['a', 2], ['b', 0]]), 10)).toEqual([
      ['a', 5, 2, true],
      ['b', 5, 0, true],
    ]);
  });

  it('caps a group of candidates together and gives what the cap leaves to the others', () => {
    const supply = new Map([['a1', 50], ['a2', 50], ['b', 50], ['c', 50]]);
    const filled = fillEvenShares([...supply.keys()], (k) => supply.get(k)!, 100, {
      groupOf: (k) => (k.startsWith('a') ? 'a' : undefined), caps: new Map([['a', 7]]),
    });
    // a1 and a2 share 7; b and c split the other 93 of the budget.
    expect(filled.map((f) => [f.candidate, f.take])).toEqual([['a1', 7], ['a2', 0], ['b', 47], ['c', 46]]);
  });
});
