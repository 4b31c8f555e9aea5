import { describe, expect, it } from 'vitest';
import { WakeSignal } from '../../src/engine/wake-signal.js';

describe('WakeSignal', () => {
  it('ends a wait early on wake()', async () => {
    const signal = new WakeSignal();
    const waiting = signal.wait(60_000);
    signal.wake();
    await expect(waiting).resolves.toBeUndefined();
  });

  it('remembers a wake that came while nobody waited', async () => {
    const signal = new WakeSignal();
    signal.wake();
    await expect(signal.wait(60_000)).resolves.toBeUndefined();
  });

  it('wakes the newest wait even after an abandoned earlier wait times out', async () => {
    const signal = new WakeSignal();
    void signal.wait(1);
    const newest = signal.wait(60_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    signal.wake();
    await expect(newest).resolves.toBeUndefined();
  });
});
