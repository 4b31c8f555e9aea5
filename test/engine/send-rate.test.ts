/**
 * The send-rate limiter (src/engine/send-rate.ts), pure GCRA arithmetic: an idle client's burst is
 * one second's worth (at least 1), parts accrue one per emission interval, and over any span of W
 * seconds a client taking all it is allowed gets at most rate x W + burst.
 */
import { describe, expect, it } from 'vitest';
import { advancedTo, burstOf, partsAllowed } from '../../src/engine/send-rate.js';

const NOW_MS = 1_800_000_000_000;

describe('send-rate limiter', () => {
  it('lets an idle client take one second\'s worth at once, at least one part', () => {
    expect(partsAllowed({ partsPerSecond: 50, nextPartAtUs: 0 }, NOW_MS)).toBe(50);
    expect(burstOf(1)).toBe(1);
    expect(partsAllowed({ partsPerSecond: 1, nextPartAtUs: 0 }, NOW_MS)).toBe(1);
  });

  it('allows nothing while the limiter is a whole burst ahead, and one part per interval after', () => {
    const state = { partsPerSecond: 50, nextPartAtUs: advancedTo({ partsPerSecond: 50, nextPartAtUs: 0 }, 50, NOW_MS) };
    expect(state.nextPartAtUs).toBe((NOW_MS + 1_000) * 1_000);
    expect(partsAllowed(state, NOW_MS)).toBe(0);
    expect(partsAllowed(state, NOW_MS + 19)).toBe(0);
    expect(partsAllowed(state, NOW_MS + 20)).toBe(1);
    expect(partsAllowed(state, NOW_MS + 500)).toBe(25);
    expect(partsAllowed(state, NOW_MS + 60_000)).toBe(50);
  });

  it('pauses a client with a rate of 0', () => {
    expect(partsAllowed({ partsPerSecond: 0, nextPartAtUs: 0 }, NOW_MS)).toBe(0);
    expect(advancedTo({ partsPerSecond: 0, nextPartAtUs: 0 }, 3, NOW_MS)).toBe(NOW_MS * 1_000);
  });

  it('rounds each advance up, so no part goes early at a rate that does not divide a second', () => {
    expect(advancedTo({ partsPerSecond: 3, nextPartAtUs: 0 }, 1, NOW_MS)).toBe(NOW_MS * 1_000 + 333_334);
  });

  it('never lets more than rate x W + burst through in W seconds, claiming greedily every few milliseconds', () => {
    for (const partsPerSecond of [1, 7, 50, 1_000]) {
      let state = { partsPerSecond, nextPartAtUs: 0 };
      const takenAt: number[] = [];
      for (let t = NOW_MS; t < NOW_MS + 10_000; t += 3) {
        const parts = partsAllowed(state, t);
        for (let i = 0; i < parts; i++) takenAt.push(t);
        state = { partsPerSecond, nextPartAtUs: advancedTo(state, parts, t) };
      }
      // The whole 10 s: everything the rate allows, give or take the last interval.
      expect(takenAt.length).toBeLessThanOrEqual(partsPerSecond * 10 + burstOf(partsPerSecond));
      expect(takenAt.length).toBeGreaterThanOrEqual(partsPerSecond * 10);
      // Every 2 s window.
      for (let i = 0; i < takenAt.length; i++) {
        let j = i;
        while (j < takenAt.length && takenAt[j]! < takenAt[i]! + 2_000) j++;
        expect(j - i).toBeLessThanOrEqual(partsPerSecond * 2 + burstOf(partsPerSecond));
      }
    }
  });
});
