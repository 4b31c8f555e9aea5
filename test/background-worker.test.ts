import { describe, expect, it } from 'vitest';
import { BackgroundWorker, type PassCause, type PassResult } from '../src/background-worker.js';
import { ManualClock } from './support/manual-clock.js';

/** Lets the worker's promise chain (and one setImmediate turn) run; the manual clock does not move. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

function counting(results: PassResult[] = []): { passes: () => number; pass: () => PassResult } {
  let n = 0;
  return { passes: () => n, pass: () => results[n++] };
}

describe('BackgroundWorker', () => {
  it('runs one pass at start, then nothing until the clock passes intervalMs', async () => {
    const clock = new ManualClock(0);
    const work = counting();
    const worker = new BackgroundWorker({ pass: work.pass, intervalMs: 1_000, clock });
    worker.start();
    await settle();
    expect(work.passes()).toBe(1);
    clock.advanceTo(999);
    await settle();
    expect(work.passes()).toBe(1);
    clock.advanceTo(1_000);
    await settle();
    expect(work.passes()).toBe(2);
    await worker.stop();
  });

  it('wake() ends the sleep at once, without the clock moving', async () => {
    const clock = new ManualClock(0);
    const work = counting();
    const worker = new BackgroundWorker({ pass: work.pass, intervalMs: 60_000, clock });
    worker.start();
    await settle();
    worker.wake();
    await settle();
    expect(work.passes()).toBe(2);
    expect(clock.nextTimerAtMs()).toBe(60_000);
    await worker.stop();
    expect(clock.nextTimerAtMs()).toBeNull();
  });

  it('remembers a wake() that came during a pass', async () => {
    const clock = new ManualClock(0);
    let release: () => void = () => undefined;
    let passes = 0;
    const worker = new BackgroundWorker({
      clock,
      intervalMs: 60_000,
      pass: async () => {
        passes++;
        if (passes === 1) await new Promise<void>((resolve) => (release = resolve));
      },
    });
    worker.start();
    await settle();
    worker.wake();
    release();
    await settle();
    expect(passes).toBe(2);
    await worker.stop();
  });

  it("runs again without sleeping after a 'more' pass", async () => {
    const clock = new ManualClock(0);
    const work = counting(['more', 'more', 'idle']);
    const worker = new BackgroundWorker({ pass: work.pass, intervalMs: 60_000, clock });
    worker.start();
    await settle();
    expect(work.passes()).toBe(3);
    await worker.stop();
  });

  it('reads intervalMs before each sleep (a growing backoff)', async () => {
    const clock = new ManualClock(0);
    const work = counting();
    const worker = new BackgroundWorker({ pass: work.pass, intervalMs: () => 1_000 * work.passes(), clock });
    worker.start();
    await settle();
    expect(clock.nextTimerAtMs()).toBe(1_000);
    clock.advanceTo(1_000);
    await settle();
    expect(clock.nextTimerAtMs()).toBe(3_000);
    await worker.stop();
  });

  it('hands a failing pass to onError and keeps looping', async () => {
    const clock = new ManualClock(0);
    const errors: unknown[] = [];
    let passes = 0;
    const worker = new BackgroundWorker({
      clock,
      intervalMs: 10,
      onError: (err) => errors.push(err),
      pass: () => {
        passes++;
        if (passes === 1) throw new Error('boom');
      },
    });
    worker.start();
    await settle();
    expect(errors).toHaveLength(1);
    clock.advanceTo(10);
    await settle();
    expect(passes).toBe(2);
    await worker.stop();
  });

  it('stop() waits for the running pass and no pass starts after it', async () => {
    const clock = new ManualClock(0);
    let release: () => void = () => undefined;
    let passes = 0;
    let finished = false;
    const worker = new BackgroundWorker({
      clock,
      intervalMs: 10,
      pass: async () => {
        passes++;
        await new Promise<void>((resolve) => (release = resolve));
        finished = true;
      },
    });
    worker.start();
    await settle();
    const stopping = worker.stop();
    let stopped = false;
    void stopping.then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(finished).toBe(true);
    clock.advanceTo(1_000);
    await settle();
    expect(passes).toBe(1);
    await worker.stop();
  });

  it('stop() before start() settles and start() after it runs nothing', async () => {
    const work = counting();
    const worker = new BackgroundWorker({ pass: work.pass, intervalMs: 10, clock: new ManualClock(0) });
    await worker.stop();
    worker.start();
    await settle();
    expect(work.passes()).toBe(0);
  });

  describe('wakeAt', () => {
    it('shortens a running sleep to end at that clock time, and never lengthens it', async () => {
      const clock = new ManualClock(0);
      const causes: PassCause[] = [];
      const worker = new BackgroundWorker({ pass: (cause) => void causes.push(cause), intervalMs: 60_000, clock });
      worker.start();
      await settle();
      expect(clock.nextTimerAtMs()).toBe(60_000);
      worker.wakeAt(2_000);
      expect(clock.nextTimerAtMs()).toBe(2_000);
      expect(clock.pendingTimers()).toBe(1);
      worker.wakeAt(4_000); // later than the sleep's end: changes nothing
      expect(clock.nextTimerAtMs()).toBe(2_000);
      clock.advanceTo(1_999);
      await settle();
      expect(causes).toEqual(['start']);
      clock.advanceTo(2_000);
      await settle();
      expect(causes).toEqual(['start', 'due']);
      // Answered: the next sleep is the plain interval again.
      expect(clock.nextTimerAtMs()).toBe(62_000);
      await worker.stop();
    });

    it('asked during a pass, it bounds the next sleep', async () => {
      const clock = new ManualClock(0);
      let release: () => void = () => undefined;
      let passes = 0;
      const worker = new BackgroundWorker({
        clock,
        intervalMs: 60_000,
        pass: async () => {
          passes++;
          if (passes === 1) await new Promise<void>((resolve) => (release = resolve));
        },
      });
      worker.start();
      await settle();
      worker.wakeAt(8_000);
      release();
      await settle();
      expect(passes).toBe(1);
      expect(clock.nextTimerAtMs()).toBe(8_000);
      clock.advanceTo(8_000);
      await settle();
      expect(passes).toBe(2);
      await worker.stop();
    });

    it('outlives a wake() that comes before it is due', async () => {
      const clock = new ManualClock(0);
      const causes: PassCause[] = [];
      const worker = new BackgroundWorker({ pass: (cause) => void causes.push(cause), intervalMs: 60_000, clock });
      worker.start();
      await settle();
      worker.wakeAt(4_000);
      clock.advanceTo(1_000);
      worker.wake();
      await settle();
      expect(causes).toEqual(['start', 'woken']);
      expect(clock.nextTimerAtMs()).toBe(4_000);
      clock.advanceTo(4_000);
      await settle();
      expect(causes).toEqual(['start', 'woken', 'due']);
      await worker.stop();
    });
  });

  describe('keepScheduleOnWake', () => {
    it('wakes more often than intervalMs do not postpone the timed pass', async () => {
      const clock = new ManualClock(0);
      const causes: PassCause[] = [];
      const worker = new BackgroundWorker({ pass: (cause) => void causes.push(cause), intervalMs: 200, clock, keepScheduleOnWake: true });
      worker.start();
      await settle();
      for (const atMs of [100, 150, 199]) {
        clock.advanceTo(atMs);
        worker.wake();
        await settle();
        expect(clock.nextTimerAtMs()).toBe(200);
      }
      clock.advanceTo(200);
      await settle();
      expect(causes).toEqual(['start', 'woken', 'woken', 'woken', 'due']);
      expect(clock.nextTimerAtMs()).toBe(400);
      await worker.stop();
    });

    it('without it, each wake restarts the interval (the other loops)', async () => {
      const clock = new ManualClock(0);
      const work = counting();
      const worker = new BackgroundWorker({ pass: work.pass, intervalMs: 200, clock });
      worker.start();
      await settle();
      clock.advanceTo(150);
      worker.wake();
      await settle();
      expect(clock.nextTimerAtMs()).toBe(350);
      await worker.stop();
    });

    it('an earlier interval (a redrive probe falling due) still wins', async () => {
      const clock = new ManualClock(0);
      let intervalMs = 200;
      const worker = new BackgroundWorker({ pass: () => undefined, intervalMs: () => intervalMs, clock, keepScheduleOnWake: true });
      worker.start();
      await settle();
      clock.advanceTo(10);
      intervalMs = 50;
      worker.wake();
      await settle();
      expect(clock.nextTimerAtMs()).toBe(60);
      await worker.stop();
    });
  });

  describe('duePassInTimer', () => {
    it('runs a synchronous due pass inside the timer and sets the next timer before it returns', async () => {
      const clock = new ManualClock(0);
      const causes: PassCause[] = [];
      const worker = new BackgroundWorker({ pass: (cause) => void causes.push(cause), intervalMs: 20, clock, duePassInTimer: true });
      worker.start();
      await settle();
      // No settle() between steps: each pass and the next timer happen within advanceToNextTimer.
      expect(clock.advanceToNextTimer()).toBe(20);
      expect(causes).toEqual(['start', 'due']);
      expect(clock.advanceToNextTimer()).toBe(40);
      expect(causes).toEqual(['start', 'due', 'due']);
      await worker.stop();
      expect(clock.nextTimerAtMs()).toBeNull();
    });

    it('without it, the due pass waits for the microtasks after the timer', async () => {
      const clock = new ManualClock(0);
      const work = counting();
      const worker = new BackgroundWorker({ pass: work.pass, intervalMs: 20, clock });
      worker.start();
      await settle();
      clock.advanceToNextTimer();
      expect(work.passes()).toBe(1);
      expect(clock.nextTimerAtMs()).toBeNull();
      await settle();
      expect(work.passes()).toBe(2);
      expect(clock.nextTimerAtMs()).toBe(40);
      await worker.stop();
    });

    it('an async due pass is awaited before the next sleep', async () => {
      const clock = new ManualClock(0);
      let release: () => void = () => undefined;
      let passes = 0;
      const worker = new BackgroundWorker({
        clock, intervalMs: 20, duePassInTimer: true,
        pass: async () => {
          passes++;
          if (passes === 2) await new Promise<void>((resolve) => (release = resolve));
        },
      });
      worker.start();
      await settle();
      clock.advanceTo(20);
      expect(passes).toBe(2);
      await settle();
      expect(clock.nextTimerAtMs()).toBeNull();
      release();
      await settle();
      expect(clock.nextTimerAtMs()).toBe(40);
      await worker.stop();
    });
  });
});
