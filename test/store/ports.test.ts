import { describe, expect, it } from 'vitest';
import { asyncPort } from '../../src/store/ports.js';

class Counter {
  value = 0;
  add(n: number): number {
    this.value += n;
    return this.value;
  }
  fail(): never {
    throw new Error('refused');
  }
}

describe('asyncPort (one async seam over a synchronous store)', () => {
  it('runs the method on the store at call time and resolves with its result', async () => {
    const counter = new Counter();
    const port = asyncPort(counter);
    const pending = port.add(2);
    // The write happened synchronously: SQLite's effects keep the caller's order.
    expect(counter.value).toBe(2);
    await expect(pending).resolves.toBe(2);
  });

  it('turns a throw into a rejection', async () => {
    const port = asyncPort(new Counter());
    await expect(port.fail()).rejects.toThrow('refused');
  });

  it('leaves fields out of the port', () => {
    const port = asyncPort(new Counter()) as unknown as Record<string, unknown>;
    expect(port.value).toBeUndefined();
    expect(typeof port.add).toBe('function');
  });
});
