import { describe, expect, it } from 'vitest';
import { PartChangeLedger, planRecipientChanges } from '../../../src/engine/steps/part-changes.js';
import { NOW_MS, part, recipient } from './facts.js';

describe('part changes -> recipient changes -> webhook rows', () => {
  it('finishes a one-part recipient on a final receipt with one Delivery Receipt carrying the recipient context', () => {
    const ledger = new PartChangeLedger({ parts: [part(1, 10)], recipients: [recipient(10)] }, NOW_MS);
    expect(ledger.applyReceipt(1, { status: 'DELIVRD', final: true, errorCode: '000' })).toBe(true);
    expect(ledger.plan()).toEqual({
      partReceipts: [{ kind: 'finish', partId: 1, state: 'delivered', status: 'DELIVRD', errorCode: '000' }],
      recipients: [{ recipientId: 10, status: 'delivered', lastStatus: 'DELIVRD' }],
      outbox: [{ clientId: 7, recipientId: 10, to: '3538700000010', from: 'ACME', status: 'DELIVRD', clientReference: 'ref-10' }],
      credits: [],
      logs: [],
    });
  });

  it('never overwrites a final part state: a late receipt changes nothing', () => {
    const ledger = new PartChangeLedger({ parts: [part(1, 10, { state: 'delivered', last_status: 'DELIVRD', final_at: 5 })], recipients: [recipient(10, { status: 'delivered', last_status: 'DELIVRD' })] }, NOW_MS);
    expect(ledger.applyReceipt(1, { status: 'UNDELIV', final: true, errorCode: null })).toBe(false);
    expect(ledger.plan()).toEqual({ partReceipts: [], recipients: [], outbox: [], credits: [], logs: [] });
  });

  it('writes the status but queues no outbox row when the client has no webhook URL (null or empty)', () => {
    for (const webhookUrl of [null, '']) {
      const ledger = new PartChangeLedger({ parts: [part(1, 10)], recipients: [recipient(10, { webhook_url: webhookUrl })] }, NOW_MS);
      ledger.applyReceipt(1, { status: 'UNDELIV', final: true, errorCode: '001' });
      const plan = ledger.plan();
      expect(plan.recipients).toEqual([{ recipientId: 10, status: 'undelivered', lastStatus: 'UNDELIV' }]);
      expect(plan.outbox).toEqual([]);
    }
  });

  it('finishes a three-part recipient only on its last part, with one webhook', () => {
    const parts = [
      part(1, 10, { part_number: 1, parts_total: 3, state: 'delivered', last_status: 'DELIVRD', final_at: 1 }),
      part(2, 10, { part_number: 2, parts_total: 3 }),
      part(3, 10, { part_number: 3, parts_total: 3 }),
    ];
    const ledger = new PartChangeLedger({ parts, recipients: [recipient(10)] }, NOW_MS);
    ledger.applyReceipt(2, { status: 'DELIVRD', final: true, errorCode: null });
    expect(ledger.plan().recipients).toEqual([]);
    ledger.applyReceipt(3, { status: 'DELIVRD', final: true, errorCode: null });
    const plan = ledger.plan();
    expect(plan.partReceipts.map((w) => [w.partId, w.kind])).toEqual([[2, 'finish'], [3, 'finish']]);
    expect(plan.recipients).toEqual([{ recipientId: 10, status: 'delivered', lastStatus: 'DELIVRD' }]);
    expect(plan.outbox).toHaveLength(1);
  });

  it('collapses a note followed by a finish of one part into the finish, and keeps one webhook per status change', () => {
    const ledger = new PartChangeLedger({ parts: [part(1, 10)], recipients: [recipient(10)] }, NOW_MS);
    ledger.applyReceipt(1, { status: 'ENROUTE', final: false, errorCode: null });
    ledger.applyReceipt(1, { status: 'DELIVRD', final: true, errorCode: null });
    ledger.applyReceipt(1, { status: 'ACCEPTD', final: false, errorCode: null });
    const plan = ledger.plan();
    expect(plan.partReceipts).toEqual([{ kind: 'finish', partId: 1, state: 'delivered', status: 'DELIVRD', errorCode: null }]);
    expect(plan.recipients).toEqual([{ recipientId: 10, status: 'delivered', lastStatus: 'DELIVRD' }]);
    expect(plan.outbox.map((e) => e.status)).toEqual(['ENROUTE', 'DELIVRD']);
  });

  it('logs, and changes nothing, for a recipient that no longer exists', () => {
    const plan = planRecipientChanges({ parts: [part(1, 10, { state: 'undelivered' })], recipients: [] }, [{ recipientId: 10, trigger: { status: 'NO_ROUTE', final: true } }], NOW_MS);
    expect(plan).toEqual({ partReceipts: [], recipients: [], outbox: [], credits: [], logs: [{ level: 'warn', fields: { recipientId: 10 }, message: 'part changed for a recipient that no longer exists' }] });
  });

  it('plans a NO_ROUTE recipient written by the caller: undelivered with one webhook', () => {
    const plan = planRecipientChanges(
      { parts: [part(1, 10, { state: 'undelivered', last_status: 'NO_ROUTE', final_at: NOW_MS })], recipients: [recipient(10)] },
      [{ recipientId: 10, trigger: { status: 'NO_ROUTE', final: true } }], NOW_MS);
    expect(plan.recipients).toEqual([{ recipientId: 10, status: 'undelivered', lastStatus: 'NO_ROUTE' }]);
    expect(plan.outbox.map((e) => e.status)).toEqual(['NO_ROUTE']);
  });
});
