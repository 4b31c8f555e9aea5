/**
 * Charges and releases decided by the part-changing planners (docs/behaviour/credits.md "Charges
 * and releases"): a priced part is charged when the carrier accepts it, released when it ends
 * without being accepted, and never moved twice however often a batch touches it.
 */
import { describe, expect, it } from 'vitest';
import { mergeMovements, type CreditMovement } from '../../../src/accounts/credits.js';
import { ENGINE_DEFAULTS } from '../../../src/engine/config.js';
import { planOutcomes, type SubmitResult } from '../../../src/engine/steps/outcomes.js';
import { creditsOfPartChange, PartChangeLedger } from '../../../src/engine/steps/part-changes.js';
import { planRematch } from '../../../src/engine/steps/unmatched-receipts.js';
import type { ClaimablePart } from '../../../src/store/sqlite/dispatch-store.js';
import type { PartOutcome } from '../../../src/transports/transport.js';
import { NOW_MS, part, recipient } from './facts.js';

const ctx = { config: { ...ENGINE_DEFAULTS, maxAttempts: 3 }, stopping: false, nowMs: NOW_MS };
const CLIENT = 7;

function claimed(id: number, recipientId: number, fields: Partial<ClaimablePart> = {}): ClaimablePart {
  return { id, recipient_id: recipientId, campaign_id: 'c', part_number: 1, parts_total: 1, concat_reference: 0, attempts: 0, msisdn: '353870000000', ...fields };
}

function result(parts: ClaimablePart[], outcomes: PartOutcome[], claimedBy: string | null = 'node-a'): SubmitResult {
  return { transport: 'smsc', parts, outcomes, claimedBy };
}

/** A part claimed under node-a, costing `credits`. */
const submitting = (id: number, recipientId: number, credits: number, fields = {}) =>
  part(id, recipientId, { state: 'submitting', claimed_by: 'node-a', credits, ...fields });

const charge = (credits: number, campaignId = 'c'): CreditMovement[] => [
  { clientId: CLIENT, kind: 'release', credits: -credits, campaignId, note: null },
  { clientId: CLIENT, kind: 'charge', credits: -credits, campaignId, note: null },
];
const release = (credits: number, campaignId = 'c'): CreditMovement[] => [{ clientId: CLIENT, kind: 'release', credits: -credits, campaignId, note: null }];

describe('creditsOfPartChange: which movement for which change', () => {
  const priced = { credits: 3, client_id: CLIENT, campaign_id: 'c' };

  it('charges a part the carrier accepts and releases one that ends unaccepted', () => {
    expect(creditsOfPartChange({ ...priced, state: 'submitting' }, 'submitted')).toEqual(charge(3));
    expect(creditsOfPartChange({ ...priced, state: 'submitting' }, 'undelivered')).toEqual(release(3));
    // A recipient no route matches: its parts end without ever being claimed.
    expect(creditsOfPartChange({ ...priced, state: 'queued' }, 'undelivered')).toEqual(release(3));
  });

  it('moves nothing for a requeue, for a part already accepted (whatever its receipt) or final, nor for an unpriced part', () => {
    expect(creditsOfPartChange({ ...priced, state: 'submitting' }, 'queued')).toEqual([]);
    expect(creditsOfPartChange({ ...priced, state: 'submitted' }, 'undelivered')).toEqual([]);
    expect(creditsOfPartChange({ ...priced, state: 'submitted' }, 'delivered')).toEqual([]);
    expect(creditsOfPartChange({ ...priced, state: 'undelivered' }, 'submitted')).toEqual([]);
    expect(creditsOfPartChange({ ...priced, state: 'submitting', credits: 0 }, 'submitted')).toEqual([]);
    expect(creditsOfPartChange({ ...priced, state: 'submitting', credits: 0 }, 'undelivered')).toEqual([]);
  });
});

describe('outcome planner: charges and releases', () => {
  it('charges each accepted part its own price, and releases parts rejected permanently or with their retries spent', () => {
    // One result per part (each part number 1 of its own recipient).
    const perPart = (id: number, recipientId: number, outcome: PartOutcome, attempts = 0) => result([claimed(id, recipientId, { attempts })], [outcome]);
    const plan = planOutcomes([
      perPart(1, 10, { part: 1, kind: 'accepted', messageId: 'm1' }),
      perPart(2, 20, { part: 1, kind: 'permanent', status: 'REJECTD', errorCode: 11 }),
      perPart(3, 30, { part: 1, kind: 'temporary', status: 'THROTTLED' }, 2),
      perPart(4, 40, { part: 1, kind: 'temporary', status: 'THROTTLED' }),
      perPart(5, 50, { part: 1, kind: 'accepted', messageId: 'm5' }),
    ], {
      parts: [submitting(1, 10, 2), submitting(2, 20, 3), submitting(3, 30, 5), submitting(4, 40, 7), submitting(5, 50, 1)],
      recipients: [recipient(10), recipient(20), recipient(30), recipient(40), recipient(50)],
      unmatched: [],
    }, ctx);
    expect(plan.transitions.map((t) => [t.kind, t.partId])).toEqual([['submitted', 1], ['fail', 2], ['fail', 3], ['requeue', 4], ['submitted', 5]]);
    // Part 4 is requeued with attempts left: still reserved, nothing moves.
    expect(plan.changes.credits).toEqual([...charge(2), ...release(3), ...release(5), ...charge(1)]);
    expect(mergeMovements(plan.changes.credits)).toEqual([
      { clientId: CLIENT, kind: 'release', credits: -11, campaignId: 'c', note: null },
      { clientId: CLIENT, kind: 'charge', credits: -3, campaignId: 'c', note: null },
    ]);
  });

  it('a part accepted and finished undelivered by its early receipt in the same batch stays charged, once', () => {
    const plan = planOutcomes([result([claimed(1, 10)], [{ part: 1, kind: 'accepted', messageId: 'm1' }])], {
      parts: [submitting(1, 10, 4)], recipients: [recipient(10)],
      unmatched: [{ id: 5, transport: 'smsc', message_id: 'm1', status: 'UNDELIV', final: 1, error_code: '001' }],
    }, ctx);
    expect(plan.changes.partReceipts).toEqual([{ kind: 'finish', partId: 1, state: 'undelivered', status: 'UNDELIV', errorCode: '001' }]);
    expect(plan.changes.credits).toEqual(charge(4));
  });

  it('a batch holding one part twice (a stale claim and the new one) charges it once: the second outcome is fenced', () => {
    const plan = planOutcomes([
      result([claimed(1, 10)], [{ part: 1, kind: 'accepted', messageId: 'first' }]),
      result([claimed(1, 10)], [{ part: 1, kind: 'accepted', messageId: 'again' }]),
    ], { parts: [submitting(1, 10, 3)], recipients: [], unmatched: [] }, ctx);
    expect(plan.transitions).toEqual([{ kind: 'submitted', partId: 1, claimedBy: 'node-a', messageId: 'first' }]);
    expect(plan.tallies.map((t) => t.fenced)).toEqual([0, 1]);
    expect(plan.changes.credits).toEqual(charge(3));
  });

  it('a batch holding one part twice, rejected then accepted: released once, never charged', () => {
    const plan = planOutcomes([
      result([claimed(1, 10)], [{ part: 1, kind: 'permanent', status: 'REJECTD' }]),
      result([claimed(1, 10)], [{ part: 1, kind: 'accepted', messageId: 'late' }]),
    ], { parts: [submitting(1, 10, 3)], recipients: [recipient(10)], unmatched: [] }, ctx);
    expect(plan.changes.credits).toEqual(release(3));
  });

  it('charges nothing for a part whose claim is no longer this node\'s (reaped and sent by another node)', () => {
    const plan = planOutcomes([result([claimed(1, 10)], [{ part: 1, kind: 'accepted', messageId: 'm1' }])],
      { parts: [part(1, 10, { state: 'submitting', claimed_by: 'node-b', credits: 3 })], recipients: [], unmatched: [] }, ctx);
    expect(plan.transitions).toEqual([]);
    expect(plan.changes.credits).toEqual([]);
  });

  it('moves each part for its own campaign and client', () => {
    const plan = planOutcomes([
      result([claimed(1, 10)], [{ part: 1, kind: 'accepted', messageId: 'm1' }]),
      result([claimed(2, 20, { campaign_id: 'd' })], [{ part: 1, kind: 'accepted', messageId: 'm2' }]),
    ], { parts: [submitting(1, 10, 1), submitting(2, 20, 2, { campaign_id: 'd', client_id: 8 })], recipients: [], unmatched: [] }, ctx);
    expect(mergeMovements(plan.changes.credits)).toEqual([
      { clientId: CLIENT, kind: 'release', credits: -1, campaignId: 'c', note: null },
      { clientId: CLIENT, kind: 'charge', credits: -1, campaignId: 'c', note: null },
      { clientId: 8, kind: 'release', credits: -2, campaignId: 'd', note: null },
      { clientId: 8, kind: 'charge', credits: -2, campaignId: 'd', note: null },
    ]);
  });
});

describe('receipts move no credits: an accepted part stays charged', () => {
  it('a late matched receipt, delivered or not, changes no sum', () => {
    const plan = planRematch({
      receipts: [
        { id: 1, transport: 'smsc', message_id: 'm1', status: 'UNDELIV', final: 1, error_code: null, part_id: 1 },
        { id: 2, transport: 'smsc', message_id: 'm2', status: 'DELIVRD', final: 1, error_code: null, part_id: 2 },
      ],
      parts: [part(1, 10, { credits: 3 }), part(2, 20, { credits: 3 })],
      recipients: [recipient(10), recipient(20)],
    }, NOW_MS);
    expect(plan.changes.partReceipts).toHaveLength(2);
    expect(plan.changes.credits).toEqual([]);
  });

  it('the ledger patch and receipt paths share the rule: a part patched submitted then finished moves one charge', () => {
    const ledger = new PartChangeLedger({ parts: [submitting(1, 10, 2)], recipients: [recipient(10)] }, NOW_MS);
    ledger.patchPart(1, { state: 'submitted', claimed_by: null });
    ledger.applyReceipt(1, { status: 'DELIVRD', final: true, errorCode: null });
    expect(ledger.plan().credits).toEqual(charge(2));
  });
});
