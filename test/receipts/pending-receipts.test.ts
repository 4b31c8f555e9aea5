import { describe, expect, it } from 'vitest';
import { PendingReceipts } from '../../src/receipts/index.js';

describe('PendingReceipts', () => {
  it('returns parked receipts for an id in arrival order, once', () => {
    const pending = new PendingReceipts<string>({ maxEntries: 10, ttlMs: 1000 });
    pending.add('A', 'ENROUTE', 0);
    pending.add('B', 'other', 1);
    pending.add('A', 'DELIVRD', 2);
    expect(pending.take('A', 3)).toEqual(['ENROUTE', 'DELIVRD']);
    expect(pending.take('A', 3)).toEqual([]);
    expect(pending.size).toBe(1);
  });

  it('expires receipts older than ttlMs and hands them back', () => {
    const pending = new PendingReceipts<string>({ maxEntries: 10, ttlMs: 1000 });
    pending.add('A', 'r1', 0);
    pending.add('B', 'r2', 500);
    expect(pending.expire(999)).toEqual([]);
    expect(pending.expire(1000)).toEqual([{ messageId: 'A', receipt: 'r1', addedAtMs: 0 }]);
    expect(pending.take('A', 1000)).toEqual([]);
    expect(pending.take('B', 1000)).toEqual(['r2']);
  });

  it('evicts the oldest entry beyond maxEntries and hands it back', () => {
    const pending = new PendingReceipts<string>({ maxEntries: 2, ttlMs: 10_000 });
    expect(pending.add('A', 'r1', 0)).toEqual([]);
    expect(pending.add('B', 'r2', 1)).toEqual([]);
    expect(pending.add('C', 'r3', 2)).toEqual([{ messageId: 'A', receipt: 'r1', addedAtMs: 0 }]);
    expect(pending.size).toBe(2);
    expect(pending.take('A', 3)).toEqual([]);
    expect(pending.take('C', 3)).toEqual(['r3']);
  });

  it('rejects a bound that holds nothing', () => {
    expect(() => new PendingReceipts({ maxEntries: 0, ttlMs: 1 })).toThrow(RangeError);
  });
});
