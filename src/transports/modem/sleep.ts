import type { Clock } from '../../common/clock.js';

/**
 * Resolves after `ms` milliseconds by `clock`: the modem transport's waits (pacing, registration
 * polls, the late-answer guard) run on the clock it was given, so a test stepping a manual clock
 * moves them too. On the system clock the timer keeps the process alive, as a pending wait should.
 */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => {
    clock.setTimer(resolve, Math.max(0, ms));
  });
}
