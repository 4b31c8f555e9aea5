/**
 * The claim planner (src/engine/steps/claim.ts), pure: each campaign's share of a claim from the
 * candidates the store read, the cursor the next claim starts after, and the claimed parts as
 * messages interleaved campaign by campaign.
 */
import { describe, expect, it } from 'vitest';
import { claimedMessages, planClaim } from '../../../src/engine/steps/claim.js';
import type { ClaimablePart } from '../../../src/store/sqlite/dispatch-store.js';

let nextId = 1;
const part = (campaignId: string, recipientId: number, partNumber = 1, partsTotal = 1): ClaimablePart => ({
  id: nextId++, recipient_id: recipientId, campaign_id: campaignId, part_number: partNumber, parts_total: partsTotal, concat_reference: 0, attempts: 0,
  msisdn: `35387${recipientId}`,
});

describe('planClaim: fairness across campaigns', () => {
  it('gives a small campaign its part next to a large backlog, and the large one the rest', () => {
    expect(planClaim([{ campaignId: 'large', due: 100 }, { campaignId: 'small', due: 1 }], 100, '')).toEqual({
      shares: [{ campaignId: 'large', take: 99 }, { campaignId: 'small', take: 1 }],
      cursor: 'small',
    });
  });

  it('gives what a small campaign leaves unused to the others', () => {
    const plan = planClaim([{ campaignId: 'a', due: 1 }, { campaignId: 'b', due: 30 }, { campaignId: 'c', due: 30 }], 30, '');
    expect(plan.shares).toEqual([{ campaignId: 'a', take: 1 }, { campaignId: 'b', take: 15 }, { campaignId: 'c', take: 14 }]);
  });

  it('gives a campaign alone the whole claim', () => {
    expect(planClaim([{ campaignId: 'only', due: 500 }], 500, 'x').shares).toEqual([{ campaignId: 'only', take: 500 }]);
  });

  it('serves at most `limit` campaigns, one part each, and moves the cursor to the last one served', () => {
    const candidates = ['c', 'a', 'b'].map((campaignId) => ({ campaignId, due: 5 }));
    expect(planClaim(candidates, 2, 'b')).toEqual({ shares: [{ campaignId: 'c', take: 1 }, { campaignId: 'a', take: 1 }], cursor: 'a' });
  });

  it('leaves out a campaign whose parts all wait for a later retry, and keeps the cursor when nothing is due', () => {
    expect(planClaim([{ campaignId: 'later', due: 0 }, { campaignId: 'now', due: 3 }], 10, '')).toEqual({
      shares: [{ campaignId: 'now', take: 3 }], cursor: 'now',
    });
    expect(planClaim([{ campaignId: 'later', due: 0 }], 10, 'k')).toEqual({ shares: [], cursor: 'k' });
  });
});

describe('claimedMessages', () => {
  it('groups a recipient\'s parts into one message and interleaves the campaigns in the shares\' order', () => {
    const a1 = [part('a', 1, 1, 2), part('a', 1, 2, 2)];
    const a2 = [part('a', 2, 1, 2), part('a', 2, 2, 2)];
    const b1 = [part('b', 3, 1, 2), part('b', 3, 2, 2)];
    // The store's order (oldest due first) may mix campaigns; the shares say which comes first.
    const messages = claimedMessages([{ campaignId: 'b', take: 2 }, { campaignId: 'a', take: 4 }], [...a1, ...b1, ...a2]);
    expect(messages).toEqual([b1, a1, a2]);
  });

  it('returns nothing for an empty claim', () => {
    expect(claimedMessages([{ campaignId: 'a', take: 3 }], [])).toEqual([]);
  });
});
