/**
 * The claim planner (src/engine/steps/claim.ts), pure: each campaign's share of a claim from the
 * candidates the store read, the cursor the next claim starts after, the claimed parts as
 * messages interleaved campaign by campaign, and a rated client's cap: its campaigns together take
 * at most what its limiter allows now, the rest going to other clients' campaigns, and the plan
 * says where its limiter stands after the claim.
 */
import { describe, expect, it } from 'vitest';
import { claimedMessages, planClaim as planClaimAt, sendRatesToLock, withLockedRates } from '../../../src/engine/steps/claim.js';
import type { ClaimCandidate } from '../../../src/store/dispatch-steps.js';
import type { ClaimablePart } from '../../../src/store/sqlite/dispatch-store.js';

const NOW_MS = 1_800_000_000_000;
const NOW_US = NOW_MS * 1_000;

/** An unlimited client's campaign (client 1 unless said). */
type Unrated = { campaignId: string; due: number; clientId?: number };
const unrated = (c: Unrated): ClaimCandidate => ({ clientId: 1, ...c, partsPerSecond: null, nextPartAtUs: null });
/** A campaign of a client with a send rate of `partsPerSecond`, its next part due at `nextPartAtUs`. */
const rated = (campaignId: string, due: number, clientId: number, partsPerSecond: number, nextPartAtUs = 0): ClaimCandidate => ({
  campaignId, due, clientId, partsPerSecond, nextPartAtUs,
});

/** The plan for candidates of unlimited clients, as before any client had a rate. */
function planClaim(candidates: readonly (Unrated | ClaimCandidate)[], limit: number, cursor: string, nowMs = NOW_MS): ReturnType<typeof planClaimAt> {
  return planClaimAt(candidates.map((c) => ('partsPerSecond' in c ? c : unrated(c))), limit, cursor, nowMs);
}

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
      sendRates: [],
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
    expect(planClaim(candidates, 2, 'b')).toEqual({ shares: [{ campaignId: 'c', take: 1 }, { campaignId: 'a', take: 1 }], cursor: 'a', sendRates: [] });
  });

  it('leaves out a campaign whose parts all wait for a later retry, and keeps the cursor when nothing is due', () => {
    expect(planClaim([{ campaignId: 'later', due: 0 }, { campaignId: 'now', due: 3 }], 10, '')).toEqual({
      shares: [{ campaignId: 'now', take: 3 }], cursor: 'now', sendRates: [],
    });
    expect(planClaim([{ campaignId: 'later', due: 0 }], 10, 'k')).toEqual({ shares: [], cursor: 'k', sendRates: [] });
  });
});

describe('planClaim: a client\'s send rate', () => {
  it('caps an idle rated client at one second\'s worth (its burst) and gives the rest of the claim to the other client', () => {
    const plan = planClaim([rated('a', 500, 7, 50), { campaignId: 'b', due: 500, clientId: 8 }], 500, '');
    expect(plan.shares).toEqual([{ campaignId: 'a', take: 50 }, { campaignId: 'b', take: 450 }]);
    // 50 parts at 50 a second: its next part is due a second from now.
    expect(plan.sendRates).toEqual([{ clientId: 7, nextPartAtUs: NOW_US + 1_000_000 }]);
  });

  it('caps the rated client\'s campaigns together, not each one', () => {
    const plan = planClaim([rated('a1', 100, 7, 10), rated('a2', 100, 7, 10), { campaignId: 'b', due: 100, clientId: 8 }], 90, '');
    expect(plan.shares).toEqual([{ campaignId: 'a1', take: 10 }, { campaignId: 'b', take: 80 }]);
    expect(plan.sendRates).toEqual([{ clientId: 7, nextPartAtUs: NOW_US + 1_000_000 }]);
  });

  it('skips a client at its rate: nothing for it, the whole claim for the others, and its limiter left as it is', () => {
    // Its limiter stands a whole second (its burst) ahead: nothing may go now.
    const plan = planClaim([rated('a', 500, 7, 50, NOW_US + 1_000_000), { campaignId: 'b', due: 500, clientId: 8 }], 300, '');
    expect(plan.shares).toEqual([{ campaignId: 'b', take: 300 }]);
    expect(plan.sendRates).toEqual([]);
    expect(plan.cursor).toBe('b');
  });

  it('takes what has accrued since its last claim, from where its limiter stood', () => {
    // 400 ms ahead at 50 a second: 20 parts of its burst of 50 are still spent, 30 may go now.
    const plan = planClaim([rated('a', 500, 7, 50, NOW_US + 400_000)], 500, '');
    expect(plan.shares).toEqual([{ campaignId: 'a', take: 30 }]);
    expect(plan.sendRates).toEqual([{ clientId: 7, nextPartAtUs: NOW_US + 400_000 + 30 * 20_000 }]);
    // 100 ms later, five more have accrued.
    const later = planClaim([rated('a', 470, 7, 50, NOW_US + 1_000_000)], 500, '', NOW_MS + 100);
    expect(later.shares).toEqual([{ campaignId: 'a', take: 5 }]);
    expect(later.sendRates).toEqual([{ clientId: 7, nextPartAtUs: NOW_US + 1_100_000 }]);
  });

  it('advances only by what the campaigns had due, and from now when the client was idle', () => {
    const plan = planClaim([rated('a', 3, 7, 50, NOW_US - 60_000_000)], 500, '');
    expect(plan.shares).toEqual([{ campaignId: 'a', take: 3 }]);
    expect(plan.sendRates).toEqual([{ clientId: 7, nextPartAtUs: NOW_US + 60_000 }]);
  });

  it('gives a slow client one part at a time, never a burst below one', () => {
    // 1 a second: a burst of one part, then nothing until a second has passed.
    const first = planClaim([rated('a', 10, 7, 1)], 100, '');
    expect(first.shares).toEqual([{ campaignId: 'a', take: 1 }]);
    const next = planClaim([rated('a', 9, 7, 1, first.sendRates[0]!.nextPartAtUs)], 100, '', NOW_MS + 999);
    expect(next.shares).toEqual([]);
    const after = planClaim([rated('a', 9, 7, 1, first.sendRates[0]!.nextPartAtUs)], 100, '', NOW_MS + 1_000);
    expect(after.shares).toEqual([{ campaignId: 'a', take: 1 }]);
  });

  it('takes nothing for a client whose rate is 0 (paused)', () => {
    expect(planClaim([rated('a', 10, 7, 0), { campaignId: 'b', due: 5, clientId: 8 }], 100, '').shares).toEqual([{ campaignId: 'b', take: 5 }]);
  });

  it('locks the rated clients that may send now, in client id order, and plans on the locked state, a client whose row went being unlimited', () => {
    const read = [rated('a', 10, 9, 5), rated('b', 10, 3, 5), unrated({ campaignId: 'c', due: 10, clientId: 4 }), rated('d', 10, 9, 5)];
    expect(sendRatesToLock(read, NOW_MS)).toEqual([3, 9]);
    const locked = withLockedRates(read, [3, 9], [{ clientId: 9, partsPerSecond: 2, nextPartAtUs: NOW_US }]);
    expect(locked.map((c) => [c.campaignId, c.partsPerSecond, c.nextPartAtUs])).toEqual([['a', 2, NOW_US], ['b', null, null], ['c', null, null], ['d', 2, NOW_US]]);
    expect(planClaimAt(locked, 100, '', NOW_MS).shares).toEqual([{ campaignId: 'a', take: 2 }, { campaignId: 'b', take: 10 }, { campaignId: 'c', take: 10 }]);
  });

  it('leaves a client at its rate unlocked: nothing for it in this claim, and no lock for the other clients\' claims to wait on', () => {
    const read = [rated('a', 10, 9, 5, NOW_US + 1_000_000), unrated({ campaignId: 'b', due: 10, clientId: 4 })];
    expect(sendRatesToLock(read, NOW_MS)).toEqual([]);
    expect(planClaimAt(withLockedRates(read, [], []), 100, '', NOW_MS)).toEqual({ shares: [{ campaignId: 'b', take: 10 }], cursor: 'b', sendRates: [] });
    // A fifth of a second later one part has accrued: it is locked again.
    expect(sendRatesToLock(read, NOW_MS + 200)).toEqual([9]);
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
