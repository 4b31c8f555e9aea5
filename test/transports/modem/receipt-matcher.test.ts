import { describe, expect, it } from 'vitest';
import { ReceiptMatcher } from '../../../src/transports/modem/receipt-matcher.js';

describe('ReceiptMatcher', () => {
  it('matches by device, TP-MR and recipient within the window', () => {
    const matcher = new ReceiptMatcher(1_000);
    matcher.remember('m0', 5, '353871234567', 'm0-a', 0);
    matcher.remember('m1', 5, '353871234567', 'm1-b', 0);
    expect(matcher.match('m0', 5, '+353871234567', 10)).toBe('m0-a');
    expect(matcher.match('m1', 5, '353871234567', 10)).toBe('m1-b');
    expect(matcher.match('m0', 6, '353871234567', 10)).toBeNull();
    expect(matcher.match('m0', 5, '353879999999', 10)).toBeNull();
    expect(matcher.match('m0', 5, '353871234567', 1_000)).toBeNull();
  });

  it('tells apart two recipients that got the same TP-MR after a wrap', () => {
    const matcher = new ReceiptMatcher(60_000);
    matcher.remember('m0', 0, '353871111111', 'first', 0);
    matcher.remember('m0', 0, '353872222222', 'after-wrap', 10);
    expect(matcher.match('m0', 0, '353871111111', 20)).toBe('first');
    expect(matcher.match('m0', 0, '353872222222', 20)).toBe('after-wrap');
  });

  it('replaces an entry when the same (TP-MR, recipient) comes round again', () => {
    const matcher = new ReceiptMatcher(60_000);
    matcher.remember('m0', 9, '353871111111', 'old', 0);
    matcher.remember('m0', 9, '353871111111', 'new', 10);
    expect(matcher.match('m0', 9, '353871111111', 20)).toBe('new');
    expect(matcher.size).toBe(1);
  });

  it('accepts a report that gives the recipient in national form', () => {
    const matcher = new ReceiptMatcher(60_000);
    matcher.remember('m0', 1, '353871234567', 'id', 0);
    expect(matcher.match('m0', 1, '0871234567', 1)).toBe('id');
    expect(matcher.match('m0', 1, '4567', 1)).toBeNull();
  });

  it('forgets final receipts, prunes expired entries and evicts the oldest beyond its bound', () => {
    const matcher = new ReceiptMatcher(100, 2);
    matcher.remember('m0', 1, '353871111111', 'a', 0);
    matcher.forget('m0', 1, 'a');
    expect(matcher.size).toBe(0);
    matcher.remember('m0', 1, '353871111111', 'a', 0);
    matcher.remember('m0', 2, '353871111111', 'b', 1);
    matcher.remember('m0', 3, '353871111111', 'c', 2);
    expect(matcher.size).toBe(2);
    expect(matcher.evictedCount).toBe(1);
    expect(matcher.match('m0', 1, '353871111111', 3)).toBeNull();
    expect(matcher.prune(1_000)).toBe(2);
    expect(matcher.size).toBe(0);
  });
});
