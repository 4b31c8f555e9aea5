import { afterEach, describe, expect, it } from 'vitest';
import { BackgroundWorker, type BackgroundWorkerOptions, type PassCause, type PassResult } from '../src/common/background-worker.js';
import { ManualClock } from './support/manual-clock.js';

/** Lets the worker's promise chain (and one setImmediate turn) run; the manual clock does not move. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

function counting(results: PassResult[] = []): { passes: () => number; pass: () => PassResult } {
  let n = 0;
  return { passes: () => n, pass: () => results[n++] };
}

/** Pass causes in order, for the tests that look at why each pass ran. */
function recording(): { causes: PassCause[]; pass: (cause: PassCause) => void } {
  const causes: PassCause[] = [];
  return { causes, pass: (cause) => void causes.push(cause) };
}

/** A pass whose `blockedPass`-th run waits until release() (each test says which run blocks). */
function gated(blockedPass: number | 'every'): { passes: () => number; release: () => void; pass: () => Promise<void> } {
  let n = 0;
  let release: () => void = () => undefined;
  return {
    passes: () => n,
    release: () => release(),
    pass: async () => {
      n++;
      if (blockedPass === 'every' || n === blockedPass) await new Promise<void>((resolve) => (release = resolve));
    },
  };
}

const running = new Set<BackgroundWorker>();
afterEach(async () => {
  await Promise.all([...running].map((worker) => worker.stop()));
  running.clear();
});

/** A worker on a manual clock at 0, started, its first pass settled; stopped after the test. */
async function startedWorker(options: Omit<BackgroundWorkerOptions, 'clock'>): Promise<{ clock: ManualClock; worker: BackgroundWorker }> {
  const clock = new ManualClock(0);
  const worker = new BackgroundWorker({ ...options, clock });
  running.add(worker);
  worker.start();
  await settle();
  return { clock, worker };
}

describe('BackgroundWorker', () => {
  it('runs one pass at start, then nothing until the clock passes intervalMs', async () => {
    const work = counting();
    const { clock } = await startedWorker({ pass: work.pass, intervalMs: 1_000 });
    expect(work.passes()).toBe(1);
    clock.advanceTo(999);
    await settle();
    expect(work.passes()).toBe(1);
    clock.advanceTo(1_000);
    await settle();
    expect(work.passes()).toBe(2);
  });

  it('wake() ends the sleep at once, without the clock moving', async () => {
    const work = counting();
    const { clock, worker } = await startedWorker({ pass: work.pass, intervalMs: 60_000 });
    worker.wake();
    await settle();
    expect(work.passes()).toBe(2);
    expect(clock.nextTimerAtMs()).toBe(60_000);
    await worker.stop();
    expect(clock.nextTimerAtMs()).toBeNull();
  });

  it('remembers a wake() that came during a pass', async () => {
    const work = gated(1);
    const { worker } = await startedWorker({ pass: work.pass, intervalMs: 60_000 });
    worker.wake();
    work.release();
    await settle();
    expect(work.passes()).toBe(2);
  });

  it("runs again without sleeping after a 'more' pass", async () => {
    const work = counting(['more', 'more', 'idle']);
    await startedWorker({ pass: work.pass, intervalMs: 60_000 });
    expect(work.passes()).toBe(3);
  });

  it('reads intervalMs before each sleep (a growing backoff)', async () => {
    const work = counting();
    const { clock } = await startedWorker({ pass: work.pass, intervalMs: () => 1_000 * work.passes() });
    expect(clock.nextTimerAtMs()).toBe(1_000);
    clock.advanceTo(1_000);
    await settle();
    expect(clock.nextTimerAtMs()).toBe(3_000);
  });

  it('hands a failing pass to onError and keeps looping', async () => {
    const errors: unknown[] = [];
    let passes = 0;
    const { clock } = await startedWorker({
      intervalMs: 10,
      onError: (err) => errors.push(err),
      pass: () => {
        passes++;
        if (passes === 1) throw new Error('boom');
      },
    });
    expect(errors).toHaveLength(1);
    clock.advanceTo(10);
    await settle();
    expect(passes).toBe(2);
  });

  it('stop() waits for the running pass and no pass starts after it', async () => {
    const work = gated('every');
    let finished = false;
    const { clock, worker } = await startedWorker({
      intervalMs: 10,
      pass: async () => {
        await work.pass();
        finished = true;
      },
    });
    const stopping = worker.stop();
    let stopped = false;
    void stopping.then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    work.release();
    await stopping;
    expect(finished).toBe(true);
    clock.advanceTo(1_000);
    await settle();
    expect(work.passes()).toBe(1);
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
      const work = recording();
      const { clock, worker } = await startedWorker({ pass: work.pass, intervalMs: 60_000 });
      expect(clock.nextTimerAtMs()).toBe(60_000);
      worker.wakeAt(2_000);
      expect(clock.nextTimerAtMs()).toBe(2_000);
      expect(clock.pendingTimers()).toBe(1);
      worker.wakeAt(4_000); // later than the sleep's end: changes nothing
      expect(clock.nextTimerAtMs()).toBe(2_000);
      clock.advanceTo(1_999);
      await settle();
      expect(work.causes).toEqual(['start']);
      clock.advanceTo(2_000);
      await settle();
      expect(work.causes).toEqual(['start', 'due']);
      // Answered: the next sleep is the plain interval again.
      expect(clock.nextTimerAtMs()).toBe(62_000);
    });

    it('asked during a pass, it bounds the next sleep', async () => {
      const work = gated(1);
      const { clock, worker } = await startedWorker({ pass: work.pass, intervalMs: 60_000 });
      worker.wakeAt(8_000);
      work.release();
      await settle();
      expect(work.passes()).toBe(1);
      expect(clock.nextTimerAtMs()).toBe(8_000);
      clock.advanceTo(8_000);
      await settle();
      expect(work.passes()).toBe(2);
    });

    it('outlives a wake() that comes before it is due', async () => {
      const work = recording();
      const { clock, worker } = await startedWorker({ pass: work.pass, intervalMs: 60_000 });
      worker.wakeAt(4_000);
      clock.advanceTo(1_000);
      worker.wake();
      await settle();
      expect(work.causes).toEqual(['start', 'woken']);
      expect(clock.nextTimerAtMs()).toBe(4_000);
      clock.advanceTo(4_000);
      await settle();
      expect(work.causes).toEqual(['start', 'woken', 'due']);
    });
  });

  describe('keepScheduleOnWake', () => {
    it('wakes more often than intervalMs do not postpone the timed pass', async () => {
      const work = recording();
      const { clock, worker } = await startedWorker({ pass: work.pass, intervalMs: 200, keepScheduleOnWake: true });
      for (const atMs of [100, 150, 199]) {
        clock.advanceTo(atMs);
        worker.wake();
        await settle();
        expect(clock.nextTimerAtMs()).toBe(200);
      }
      clock.advanceTo(200);
      await settle();
      expect(work.causes).toEqual(['start', 'woken', 'woken', 'woken', 'due']);
      expect(clock.nextTimerAtMs()).toBe(400);
    });

    it('without it, each wake restarts the interval (the other loops)', async () => {
      const { clock, worker } = await startedWorker({ pass: counting().pass, intervalMs: 200 });
      clock.advanceTo(150);
      worker.wake();
      await settle();
      expect(clock.nextTimerAtMs()).toBe(350);
    });

    it('an earlier interval (a redrive probe falling due) still wins', async () => {
      let intervalMs = 200;
      const { clock, worker } = await startedWorker({ pass: () => undefined, intervalMs: () => intervalMs, keepScheduleOnWake: true });
      clock.advanceTo(10);
      intervalMs = 50;
      worker.wake();
      await settle();
      expect(clock.nextTimerAtMs()).toBe(60);
    });
  });

  describe('duePassInTimer', () => {
    it('runs a synchronous due pass inside the timer and sets the next timer before it returns', async () => {
      const work = recording();
      const { clock, worker } = await startedWorker({ pass: work.pass, intervalMs: 20, duePassInTimer: true });
      // No settle() between steps: each pass and the next timer happen within advanceToNextTimer.
      expect(clock.advanceToNextTimer()).toBe(20);
      expect(work.causes).toEqual(['start', 'due']);
      expect(clock.advanceToNextTimer()).toBe(40);
      expect(work.causes).toEqual(['start', 'due', 'due']);
      await worker.stop();
      expect(clock.nextTimerAtMs()).toBeNull();
    });

    it('without it, the due pass waits for the microtasks after the timer', async () => {
      const work = counting();
      const { clock } = await startedWorker({ pass: work.pass, intervalMs: 20 });
      clock.advanceToNextTimer();
      expect(work.passes()).toBe(1);
      expect(clock.nextTimerAtMs()).toBeNull();
      await settle();
      expect(work.passes()).toBe(2);
      expect(clock.nextTimerAtMs()).toBe(40);
    });

    it('an async due pass is awaited before the next sleep', async () => {
      const work = gated(2);
      const { clock } = await startedWorker({ pass: work.pass, intervalMs: 20, duePassInTimer: true });
      clock.advanceTo(20);
      expect(work.passes()).toBe(2);
      await settle();
      expect(clock.nextTimerAtMs()).toBeNull();
      work.release();
      await settle();
      expect(clock.nextTimerAtMs()).toBe(40);
    });
  });
});
