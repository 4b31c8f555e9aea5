import { describe, expect, it } from 'vitest';
import { BackgroundWorker, type PassResult } from '../src/background-worker.js';
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
});
