import { describe, expect, it } from 'vitest';
import { attemptsExhausted, nextRetryAt } from '../../src/engine/retry-policy.js';

const policy = { maxAttempts: 5, retryBaseDelayMs: 2_000, retryMaxDelayMs: 300_000 };

describe('nextRetryAt', () => {
  it.each([
    [1, 2_000],
    [2, 4_000],
    [3, 8_000],
    [4, 16_000],
    [8, 256_000],
    [9, 300_000],
    [60, 300_000],
  ])('after %i failed attempts waits %i ms', (attempts, delayMs) => {
    expect(nextRetryAt(attempts, 1_000_000, policy)).toBe(1_000_000 + delayMs);
  });

  it('waits at least what the transport asked (retryAfterMs)', () => {
    expect(nextRetryAt(1, 0, policy, 30_000)).toBe(30_000);
    expect(nextRetryAt(3, 0, policy, 1_000)).toBe(8_000);
  });

  it('never returns a time before now, even for attempt 0', () => {
    expect(nextRetryAt(0, 500, policy)).toBe(2_500);
  });
});

describe('attemptsExhausted', () => {
  it('allows maxAttempts attempts in all', () => {
    expect(attemptsExhausted(4, policy)).toBe(false);
    expect(attemptsExhausted(5, policy)).toBe(true);
  });
});
