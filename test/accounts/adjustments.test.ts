/**
 * The operator's balance changes as ledger movements (src/accounts/adjustments.ts): `credits add`
 * writes a top-up for more credits and a correction for fewer; `credits set` a correction of the
 * difference; a change of nothing writes no row.
 */
import { describe, expect, it } from 'vitest';
import { adjustmentOf, correctionTo } from '../../src/accounts/adjustments.js';

describe('adjustmentOf', () => {
  it('is a top-up for a positive amount, a correction for a negative one, nothing for 0', () => {
    expect(adjustmentOf(7, 250, 'invoice 12')).toEqual([{ clientId: 7, kind: 'top-up', credits: 250, campaignId: null, note: 'invoice 12' }]);
    expect(adjustmentOf(7, -40, null)).toEqual([{ clientId: 7, kind: 'correction', credits: -40, campaignId: null, note: null }]);
    expect(adjustmentOf(7, 0, 'x')).toEqual([]);
  });
});

describe('correctionTo', () => {
  it('moves the balance to the target by the difference, noted with the target', () => {
    expect(correctionTo(7, 95, 50)).toEqual([{ clientId: 7, kind: 'correction', credits: -45, campaignId: null, note: 'set to 50' }]);
    expect(correctionTo(7, -3, 10)).toEqual([{ clientId: 7, kind: 'correction', credits: 13, campaignId: null, note: 'set to 10' }]);
    expect(correctionTo(7, 50, 50)).toEqual([]);
  });
});
