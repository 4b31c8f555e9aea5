import { describe, expect, it } from 'vitest';
import { planReceipts, type ArrivingReceipt, type ReceiptFacts } from '../../../src/engine/steps/receipts.js';
import { applyPlan, NOW_MS, part, recipient } from './facts.js';

function arriving(messageId: string, status: string, final: boolean, transport = 'smsc'): ArrivingReceipt {
  return { transport, receipt: { messageId, status, final, raw: `id:${messageId} stat:${status}` } };
}

const targets = [{ transport: 'smsc', message_id: 'm1', part_id: 1 }, { transport: 'smsc', message_id: 'm2', part_id: 2 }];

describe('receipt planner', () => {
  it('stores a receipt naming no part unmatched and changes nothing else', () => {
    const plan = planReceipts([arriving('nobody', 'DELIVRD', true)], { targets: [], parts: [], recipients: [] }, NOW_MS);
    expect(plan.receipts).toEqual([{ transport: 'smsc', messageId: 'nobody', status: 'DELIVRD', final: true, errorCode: null, doneAt: null, raw: 'id:nobody stat:DELIVRD', receivedAt: NOW_MS, match: { kind: 'unmatched' } }]);
    expect(plan.results).toEqual([{ matched: false, logs: [] }]);
    expect(plan.changes).toEqual({ partReceipts: [], recipients: [], outbox: [], credits: [], logs: [] });
  });

  it('matches by transport as well as message id', () => {
    const plan = planReceipts([arriving('m1', 'DELIVRD', true, 'other')], { targets, parts: [part(1, 10)], recipients: [recipient(10)] }, NOW_MS);
    expect(plan.receipts[0]?.match).toEqual({ kind: 'unmatched' });
  });

  it('applies two receipts for one message in one batch as one by one: the duplicate changes nothing', () => {
    const plan = planReceipts([arriving('m1', 'DELIVRD', true), arriving('m1', 'DELIVRD', true)], { targets, parts: [part(1, 10)], recipients: [recipient(10)] }, NOW_MS);
    expect(plan.receipts.map((r) => r.match)).toEqual([{ kind: 'matched', partId: 1 }, { kind: 'matched', partId: 1 }]);
    expect(plan.changes.partReceipts).toHaveLength(1);
    expect(plan.changes.recipients).toEqual([{ recipientId: 10, status: 'delivered', lastStatus: 'DELIVRD' }]);
    expect(plan.changes.outbox).toHaveLength(1);
  });

  it('gives for a batch what the same receipts planned one by one give (ENROUTE, DELIVRD, a duplicate, a late UNDELIV, a multi-part recipient)', () => {
    const facts: ReceiptFacts = {
      targets: [...targets, { transport: 'smsc', message_id: 'm3', part_id: 3 }],
      parts: [part(1, 10), part(2, 20, { part_number: 1, parts_total: 2 }), part(3, 20, { part_number: 2, parts_total: 2 })],
      recipients: [recipient(10), recipient(20)],
    };
    const items = [
      arriving('m1', 'ENROUTE', false), arriving('m2', 'DELIVRD', true), arriving('m1', 'DELIVRD', true),
      arriving('m1', 'DELIVRD', true), arriving('m3', 'ACCEPTD', false), arriving('m1', 'UNDELIV', true), arriving('m3', 'DELIVRD', true),
    ];
    const batch = planReceipts(items, facts, NOW_MS);
    let state: ReceiptFacts = facts;
    const outbox = [];
    for (const item of items) {
      const one = planReceipts([item], state, NOW_MS);
      outbox.push(...one.changes.outbox);
      state = { targets: facts.targets, ...applyPlan(state, one.changes, NOW_MS) };
    }
    expect(applyPlan(facts, batch.changes, NOW_MS)).toEqual({ parts: state.parts, recipients: state.recipients });
    expect(batch.changes.outbox).toEqual(outbox);
    expect(state.recipients.map((r) => [r.id, r.status, r.last_status])).toEqual([[10, 'delivered', 'DELIVRD'], [20, 'delivered', 'DELIVRD']]);
    expect(outbox.map((e) => [e.recipientId, e.status])).toEqual([[10, 'ENROUTE'], [10, 'DELIVRD'], [20, 'ACCEPTD'], [20, 'DELIVRD']]);
  });

  it('records an empty status as UNKNOWN and fits a long one to 30 characters, each with a line logged after the commit', () => {
    const long = 'S'.repeat(40);
    const plan = planReceipts([arriving('m1', ' ', false), arriving('m2', long, false)], { targets, parts: [part(1, 10), part(2, 20)], recipients: [recipient(10), recipient(20)] }, NOW_MS);
    expect(plan.receipts.map((r) => r.status)).toEqual(['UNKNOWN', 'S'.repeat(30)]);
    expect(plan.results.map((r) => r.logs.map((l) => l.message))).toEqual([
      ['receipt without a status: recorded as UNKNOWN'], ['receipt status longer than 30 characters: first 30 kept'],
    ]);
  });
});
