import { describe, expect, it } from 'vitest';
import { expiryCutoffMs, planRematch } from '../../../src/engine/steps/unmatched-receipts.js';
import { NOW_MS, part, recipient } from './facts.js';

describe('unmatched-receipt sweep planner', () => {
  it('matches receipts oldest first and applies them as if they had just arrived', () => {
    const plan = planRematch({
      receipts: [
        { id: 8, transport: 'smsc', message_id: 'm1', status: 'DELIVRD', final: 1, error_code: null, part_id: 1 },
        { id: 4, transport: 'smsc', message_id: 'm1', status: 'ENROUTE', final: 0, error_code: null, part_id: 1 },
      ],
      parts: [part(1, 10)],
      recipients: [recipient(10)],
    }, NOW_MS);
    expect(plan.matches).toEqual([{ receiptId: 4, partId: 1 }, { receiptId: 8, partId: 1 }]);
    expect(plan.changes.partReceipts).toEqual([{ kind: 'finish', partId: 1, state: 'delivered', status: 'DELIVRD', errorCode: null }]);
    expect(plan.changes.outbox.map((e) => e.status)).toEqual(['ENROUTE', 'DELIVRD']);
  });

  it('matches a receipt whose part is final already without changing the part', () => {
    const plan = planRematch({
      receipts: [{ id: 4, transport: 'smsc', message_id: 'm1', status: 'UNDELIV', final: 1, error_code: null, part_id: 1 }],
      parts: [part(1, 10, { state: 'delivered', last_status: 'DELIVRD' })],
      recipients: [recipient(10, { status: 'delivered', last_status: 'DELIVRD' })],
    }, NOW_MS);
    expect(plan.matches).toEqual([{ receiptId: 4, partId: 1 }]);
    expect(plan.changes).toEqual({ partReceipts: [], recipients: [], outbox: [], credits: [], logs: [] });
  });

  it('expires receipts received more than the TTL ago', () => {
    expect(expiryCutoffMs(NOW_MS, 1_000)).toBe(NOW_MS - 1_000);
  });
});
