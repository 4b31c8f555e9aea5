/**
 * What one part to a number costs (src/accounts/credits.ts creditsPerPart): the longest matching
 * `pricing` prefix wins, whatever the order of the rules; "" matches every number; a number no
 * rule matches, or an empty pricing, costs 1 credit; a leading + is ignored.
 */
import { describe, expect, it } from 'vitest';
import { creditsPerPart, DEFAULT_CREDITS_PER_PART, type PricingRule } from '../../src/accounts/credits.js';

const PRICING: PricingRule[] = [
  { prefix: '1', creditsPerPart: 3 },
  { prefix: '353', creditsPerPart: 1 },
  { prefix: '35387', creditsPerPart: 2 },
  { prefix: '44', creditsPerPart: 0 },
];

describe('creditsPerPart', () => {
  it('charges 1 credit a part when there is no pricing', () => {
    expect(DEFAULT_CREDITS_PER_PART).toBe(1);
    expect(creditsPerPart([], '353871234567')).toBe(1);
  });

  it('charges 1 credit a part to a number no rule matches', () => {
    expect(creditsPerPart(PRICING, '33612345678')).toBe(1);
  });

  it('takes the longest matching prefix, whatever the rules order', () => {
    expect(creditsPerPart(PRICING, '353871234567')).toBe(2);
    expect(creditsPerPart(PRICING, '353851234567')).toBe(1);
    expect(creditsPerPart(PRICING, '12025550123')).toBe(3);
    expect(creditsPerPart([...PRICING].reverse(), '353871234567')).toBe(2);
    expect(creditsPerPart([...PRICING].reverse(), '353851234567')).toBe(1);
  });

  it('lets a rule make a destination free', () => {
    expect(creditsPerPart(PRICING, '447700900123')).toBe(0);
  });

  it('matches every number with the "" prefix, below any longer prefix', () => {
    const withCatchAll = [{ prefix: '', creditsPerPart: 5 }, ...PRICING];
    expect(creditsPerPart(withCatchAll, '33612345678')).toBe(5);
    expect(creditsPerPart(withCatchAll, '353871234567')).toBe(2);
    expect(creditsPerPart([{ prefix: '', creditsPerPart: 0 }], '12025550123')).toBe(0);
  });

  it('ignores a leading + of the number', () => {
    expect(creditsPerPart(PRICING, '+12025550123')).toBe(3);
  });
});
