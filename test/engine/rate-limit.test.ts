import { describe, expect, it } from 'vitest';
import { rateLimitFor } from '../../src/engine/transport-lane.js';

describe('rateLimitFor (p-queue settings from a transport maxPerSecond)', () => {
  it.each([
    [100, { intervalCap: 10, interval: 100 }],
    [1_000, { intervalCap: 100, interval: 100 }],
    [15, { intervalCap: 2, interval: 100 }],
    [5, { intervalCap: 5, interval: 1_000 }],
    [0.5, { intervalCap: 1, interval: 2_000 }],
  ])('%d per second -> %o', (maxPerSecond, expected) => {
    expect(rateLimitFor(maxPerSecond)).toEqual(expected);
  });

  it('sets no limit for a transport without one', () => {
    expect(rateLimitFor(Number.POSITIVE_INFINITY)).toBeUndefined();
    expect(rateLimitFor(0)).toBeUndefined();
  });
});
