import { describe, expect, it } from 'vitest';
import { PartWindow } from '../../src/engine/part-window.js';

/** Which acquisitions have resolved so far (after pending microtasks ran). */
async function settled(labels: string[], promises: Promise<void>[]): Promise<string[]> {
  const done: string[] = [];
  promises.forEach((p, i) => void p.then(() => done.push(labels[i] as string)));
  await new Promise((resolve) => setImmediate(resolve));
  return done.sort();
}

describe('PartWindow', () => {
  it('tryAcquire takes slots at once when they fit and nobody waits, and never jumps the queue', async () => {
    const window = new PartWindow(3);
    expect(window.tryAcquire(2)).toBe(true);
    expect(window.inFlight).toBe(2);
    expect(window.tryAcquire(2)).toBe(false);
    expect(window.inFlight).toBe(2);
    const big = window.acquire(3);
    // One slot is free, but the 3-part message waits ahead: the 1-part try must not overtake it.
    expect(window.tryAcquire(1)).toBe(false);
    window.release(2);
    expect(await big).toBe(true);
    expect(window.inFlight).toBe(3);
    window.release(3);
    window.resize(0);
    expect(window.tryAcquire(1)).toBe(false);
    expect(await window.acquire(1)).toBe(false);
  });

  it('counts parts, not messages: a 3-part message takes three slots', async () => {
    const window = new PartWindow(4);
    await window.acquire(3);
    expect(window.inFlight).toBe(3);
    const waiting = [window.acquire(1), window.acquire(1)];
    expect(await settled(['a', 'b'], waiting)).toEqual(['a']);
    expect(window.inFlight).toBe(4);
    window.release(3);
    await waiting[1];
    expect(window.inFlight).toBe(2);
  });

  it('serves waiters in order: a small message does not overtake a bigger one waiting before it', async () => {
    const window = new PartWindow(3);
    await window.acquire(2);
    const big = window.acquire(3);
    const small = window.acquire(1);
    expect(await settled(['big', 'small'], [big, small])).toEqual([]);
    window.release(2);
    expect(await settled(['big', 'small'], [big, small])).toEqual(['big']);
    window.release(3);
    await small;
    expect(window.inFlight).toBe(1);
  });

  it('lets a message longer than the whole window go alone once nothing is in flight', async () => {
    const window = new PartWindow(2);
    await window.acquire(1);
    const long = window.acquire(5);
    expect(await settled(['long'], [long])).toEqual([]);
    window.release(1);
    await long;
    expect(window.inFlight).toBe(5);
    const next = window.acquire(1);
    expect(await settled(['next'], [next])).toEqual([]);
    window.release(5);
    await next;
    expect(window.inFlight).toBe(1);
  });

  it('rejects a window size that is not a positive integer', () => {
    expect(() => new PartWindow(0)).toThrow(RangeError);
    expect(() => new PartWindow(1.5)).toThrow(RangeError);
  });
});

describe('PartWindow resized (a cluster node gaining or giving up bind slots)', () => {
  it('keeps what is in flight when it shrinks and admits nothing more until the in-flight parts fit', async () => {
    const window = new PartWindow(4);
    expect(await window.acquire(3)).toBe(true);
    window.resize(2);
    const next = window.acquire(1);
    expect(await settled(['next'], [next as unknown as Promise<void>])).toEqual([]);
    // 2 in flight: one more would exceed the new size.
    window.release(1);
    expect(await settled(['next'], [next as unknown as Promise<void>])).toEqual([]);
    window.release(1);
    expect(await next).toBe(true);
    expect(window.inFlight).toBe(2);
  });

  it('turns every waiter away at 0, refuses new parts, and admits them again when it grows', async () => {
    const window = new PartWindow(1);
    expect(await window.acquire(1)).toBe(true);
    const waiting = window.acquire(1);
    window.resize(0);
    expect(await waiting).toBe(false);
    expect(await window.acquire(1)).toBe(false);
    window.release(1);
    window.resize(2);
    expect(await window.acquire(2)).toBe(true);
    expect(() => window.resize(-1)).toThrow(RangeError);
  });
});
