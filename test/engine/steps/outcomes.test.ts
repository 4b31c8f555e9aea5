import { describe, expect, it } from 'vitest';
import { ENGINE_DEFAULTS } from '../../../src/engine/config.js';
import { acceptedPairs, partsInScope, planOutcomes, type OutcomeFacts, type SubmitResult } from '../../../src/engine/steps/outcomes.js';
import type { ClaimablePart } from '../../../src/store/sqlite/dispatch-store.js';
import type { PartOutcome } from '../../../src/transports/transport.js';
import { NOW_MS, part, recipient } from './facts.js';

const ctx = { config: { ...ENGINE_DEFAULTS, maxAttempts: 3 }, stopping: false, nowMs: NOW_MS };

function claimed(id: number, recipientId: number, fields: Partial<ClaimablePart> = {}): ClaimablePart {
  return { id, recipient_id: recipientId, campaign_id: 'c', part_number: 1, parts_total: 1, concat_reference: 0, attempts: 0, msisdn: '353870000000', ...fields };
}

function result(parts: ClaimablePart[], outcomes: PartOutcome[], claimedBy: string | null = 'node-a'): SubmitResult {
  return { transport: 'smsc', parts, outcomes, claimedBy };
}

const submitting = (id: number, recipientId: number, claimedBy: string | null = 'node-a', fields = {}) => part(id, recipientId, { state: 'submitting', claimed_by: claimedBy, ...fields });

describe('outcome planner', () => {
  it('marks accepted parts submitted with their message id, and reads no recipient for them', () => {
    const results = [result([claimed(1, 10)], [{ part: 1, kind: 'accepted', messageId: 'm1' }])];
    expect(acceptedPairs(results)).toEqual([{ transport: 'smsc', messageId: 'm1' }]);
    expect(partsInScope(results, [])).toEqual([]);
    const plan = planOutcomes(results, { parts: [submitting(1, 10)], recipients: [], unmatched: [] }, ctx);
    expect(plan.transitions).toEqual([{ kind: 'submitted', partId: 1, claimedBy: 'node-a', messageId: 'm1' }]);
    expect(plan.tallies).toEqual([{ counts: { accepted: 1, retried: 0, held: 0, failed: 0 }, fenced: 0, webhooks: false, logs: [] }]);
  });

  it('fences parts no longer submitting under the claim stamp: counted, nothing written', () => {
    const results = [result([claimed(1, 10), claimed(2, 20), claimed(3, 30)], [
      { part: 1, kind: 'accepted', messageId: 'm1' }, { part: 1, kind: 'permanent', status: 'REJECTD' }, { part: 1, kind: 'temporary', status: 'THROTTLED' },
    ])];
    // Part 1 was reaped and claimed again by node-b, part 2 requeued, part 3 is gone.
    const facts: OutcomeFacts = { parts: [submitting(1, 10, 'node-b'), part(2, 20, { state: 'queued' })], recipients: [recipient(10), recipient(20)], unmatched: [] };
    const plan = planOutcomes([{ ...results[0]!, parts: [results[0]!.parts[0]!] }, { ...results[0]!, parts: [results[0]!.parts[1]!] }, { ...results[0]!, parts: [results[0]!.parts[2]!] }]
      .map((r, k) => ({ ...r, outcomes: [results[0]!.outcomes[k]!] })), facts, ctx);
    expect(plan.transitions).toEqual([]);
    expect(plan.changes).toEqual({ partReceipts: [], recipients: [], outbox: [], credits: [], logs: [] });
    expect(plan.tallies.map((t) => t.fenced)).toEqual([1, 1, 1]);
    expect(plan.tallies.map((t) => t.counts)).toEqual(Array(3).fill({ accepted: 0, retried: 0, held: 0, failed: 0 }));
  });

  it('fails a part permanently with its recipient undelivered and one webhook', () => {
    const plan = planOutcomes([result([claimed(1, 10)], [{ part: 1, kind: 'permanent', status: 'REJECTD', errorCode: 11 }])],
      { parts: [submitting(1, 10)], recipients: [recipient(10)], unmatched: [] }, ctx);
    expect(plan.transitions).toEqual([{ kind: 'fail', partId: 1, claimedBy: 'node-a', attempts: 1, status: 'REJECTD', errorCode: '11' }]);
    expect(plan.changes.recipients).toEqual([{ recipientId: 10, status: 'undelivered', lastStatus: 'REJECTD' }]);
    expect(plan.changes.outbox.map((e) => e.status)).toEqual(['REJECTD']);
    expect(plan.tallies[0]).toMatchObject({ counts: { failed: 1 }, webhooks: true });
  });

  it('requeues a temporary failure with an attempt spent, holds it without one while stopping, and fails it once attempts are exhausted', () => {
    const facts: OutcomeFacts = { parts: [submitting(1, 10)], recipients: [recipient(10)], unmatched: [] };
    const temporary: PartOutcome[] = [{ part: 1, kind: 'temporary', status: 'THROTTLED' }];
    const retried = planOutcomes([result([claimed(1, 10)], temporary)], facts, ctx);
    expect(retried.transitions).toEqual([{ kind: 'requeue', partId: 1, claimedBy: 'node-a', attempts: 1, dueAtMs: expect.any(Number), status: 'THROTTLED', errorCode: null }]);
    expect(retried.tallies[0]?.counts.retried).toBe(1);
    const held = planOutcomes([result([claimed(1, 10)], temporary)], facts, { ...ctx, stopping: true });
    expect(held.transitions).toEqual([{ kind: 'requeue', partId: 1, claimedBy: 'node-a', attempts: 0, dueAtMs: NOW_MS + ENGINE_DEFAULTS.pollIntervalMs, status: 'THROTTLED', errorCode: null }]);
    expect(held.tallies[0]?.counts.held).toBe(1);
    const exhausted = planOutcomes([result([claimed(1, 10, { attempts: 2 })], temporary)], facts, ctx);
    expect(exhausted.transitions).toEqual([{ kind: 'fail', partId: 1, claimedBy: 'node-a', attempts: 3, status: 'THROTTLED', errorCode: null }]);
    expect(exhausted.tallies[0]?.logs).toEqual([{ level: 'info', fields: { partId: 1, recipientId: 10, attempts: 3, status: 'THROTTLED' }, message: 'temporary failures exhausted the attempts: part undelivered' }]);
  });

  it('matches a receipt that arrived unmatched for an accepted message id and applies it after the submit', () => {
    const results = [result([claimed(1, 10)], [{ part: 1, kind: 'accepted', messageId: 'm1' }])];
    const unmatched = [{ id: 5, transport: 'smsc', message_id: 'm1', status: 'DELIVRD', final: 1, error_code: null }];
    expect(partsInScope(results, unmatched).map((p) => p.id)).toEqual([1]);
    const plan = planOutcomes(results, { parts: [submitting(1, 10)], recipients: [recipient(10)], unmatched }, ctx);
    expect(plan.transitions).toEqual([{ kind: 'submitted', partId: 1, claimedBy: 'node-a', messageId: 'm1' }]);
    expect(plan.matches).toEqual([{ receiptId: 5, partId: 1 }]);
    expect(plan.changes.partReceipts).toEqual([{ kind: 'finish', partId: 1, state: 'delivered', status: 'DELIVRD', errorCode: null }]);
    expect(plan.changes.recipients).toEqual([{ recipientId: 10, status: 'delivered', lastStatus: 'DELIVRD' }]);
    expect(plan.tallies[0]?.webhooks).toBe(true);
  });

  it('leaves the unmatched receipt of a fenced acceptance unmatched', () => {
    const results = [result([claimed(1, 10)], [{ part: 1, kind: 'accepted', messageId: 'm1' }])];
    const unmatched = [{ id: 5, transport: 'smsc', message_id: 'm1', status: 'DELIVRD', final: 1, error_code: null }];
    const plan = planOutcomes(results, { parts: [submitting(1, 10, 'node-b')], recipients: [recipient(10)], unmatched }, ctx);
    expect(plan.matches).toEqual([]);
    expect(plan.changes.partReceipts).toEqual([]);
    expect(plan.tallies[0]?.fenced).toBe(1);
  });

  it('in one batch, a failed part and an early receipt for another part of the same recipient: undelivered once, as one by one', () => {
    const parts = [claimed(1, 10, { part_number: 1, parts_total: 2 }), claimed(2, 10, { part_number: 2, parts_total: 2 })];
    const results = [result(parts, [{ part: 1, kind: 'permanent', status: 'REJECTD' }, { part: 2, kind: 'accepted', messageId: 'm2' }])];
    const facts: OutcomeFacts = {
      parts: [submitting(1, 10, 'node-a', { part_number: 1, parts_total: 2 }), submitting(2, 10, 'node-a', { part_number: 2, parts_total: 2 })],
      recipients: [recipient(10)],
      unmatched: [{ id: 9, transport: 'smsc', message_id: 'm2', status: 'DELIVRD', final: 1, error_code: null }],
    };
    const plan = planOutcomes(results, facts, ctx);
    expect(plan.transitions.map((t) => [t.kind, t.partId])).toEqual([['fail', 1], ['submitted', 2]]);
    expect(plan.changes.partReceipts).toEqual([{ kind: 'finish', partId: 2, state: 'delivered', status: 'DELIVRD', errorCode: null }]);
    // Final once: the later receipt does not change an undelivered recipient.
    expect(plan.changes.recipients).toEqual([{ recipientId: 10, status: 'undelivered', lastStatus: 'REJECTD' }]);
    expect(plan.changes.outbox.map((e) => e.status)).toEqual(['REJECTD']);
  });

  it('a single gateway (no claimant) fences nothing', () => {
    const plan = planOutcomes([result([claimed(1, 10)], [{ part: 1, kind: 'accepted', messageId: 'm1' }], null)], { parts: [submitting(1, 10, null)], recipients: [], unmatched: [] }, ctx);
    expect(plan.tallies[0]).toMatchObject({ fenced: 0, counts: { accepted: 1 } });
  });
});
