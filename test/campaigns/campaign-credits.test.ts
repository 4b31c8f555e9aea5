/** What processing settles of a campaign's reservation, and what a requested number is priced at. */
import { describe, expect, it } from 'vitest';
import { requestedNumberPrice, settleAtProcessing } from '../../src/campaigns/campaign-credits.js';
import { numberingPlanFor } from '../../src/sms/index.js';

const PRICING = [{ prefix: '353', creditsPerPart: 2 }, { prefix: '3538', creditsPerPart: 4 }, { prefix: '1', creditsPerPart: 3 }];

describe('settleAtProcessing', () => {
  it('releases the reservation minus parts x the kept recipients\' prices', () => {
    expect(settleAtProcessing(7, 'c', 20, 2, [3, 1])).toEqual([{ clientId: 7, kind: 'release', credits: -12, campaignId: 'c', note: null }]);
  });

  it('writes nothing when every recipient was kept at the reserved price, or nothing was reserved', () => {
    expect(settleAtProcessing(7, 'c', 8, 2, [3, 1])).toEqual([]);
    expect(settleAtProcessing(7, 'c', null, 2, [0, 0])).toEqual([]);
  });

  it('reserves the difference when pricing was raised after acceptance', () => {
    expect(settleAtProcessing(7, 'c', 4, 2, [3, 1])).toEqual([{ clientId: 7, kind: 'reserve', credits: 4, campaignId: 'c', note: 'pricing raised after acceptance' }]);
  });
});

describe('requestedNumberPrice', () => {
  const ireland = numberingPlanFor('IE');
  it('prices a number as processing normalises it, by the longest prefix', () => {
    expect(requestedNumberPrice(PRICING, ireland, '0871234567')).toBe(4);
    expect(requestedNumberPrice(PRICING, ireland, '+35311234567')).toBe(2);
    expect(requestedNumberPrice(PRICING, ireland, '15551234567')).toBe(3);
    expect(requestedNumberPrice(PRICING, ireland, '447700900123')).toBe(1);
  });

  it('prices a number processing cannot normalise at nothing: it is never sent', () => {
    expect(requestedNumberPrice(PRICING, ireland, '00')).toBe(0);
  });
});
