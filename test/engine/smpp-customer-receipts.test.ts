/**
 * The part-change ledger for a recipient of an SMPP customer's submit: its receipt becomes a
 * deliver_sm row to store instead of the client's webhook, only as registered_delivery asks.
 */
import { describe, expect, it } from 'vitest';
import { PartChangeLedger } from '../../src/engine/steps/part-changes.js';
import { planOutcomes } from '../../src/engine/steps/outcomes.js';
import { ENGINE_DEFAULTS } from '../../src/engine/config.js';
import { MESSAGE_STATE, parseDeliverSm, type CustomerCut } from '../../src/smpp-server/contracts.js';
import { decodeGsm7Septets } from '../../src/sms/gsm7.js';
import type { RecipientRow } from '../../src/store/part-change-rows.js';
import { NOW_MS, part, recipient } from './steps/facts.js';

const HOUR_MS = 3_600_000;
const CREATED_MS = NOW_MS - 60_000;

function smppRecipient(registeredDelivery: number, fields: Partial<RecipientRow> = {}): RecipientRow {
  const cut: CustomerCut = { dataCoding: 0, concat: null, registeredDelivery, sourceAddrTon: 5, sourceAddrNpi: 0 };
  return recipient(10, {
    client_reference: null, sender: 'ACME', smpp_account_id: 3, smpp_submit: JSON.stringify(cut), campaign_id: 'c-smpp-1',
    campaign_created_at: CREATED_MS, smpp_text: 'Your code is 4821', ...fields,
  });
}

function receiptOn(rec: RecipientRow, status: string, errorCode: string | null, options = {}) {
  const ledger = new PartChangeLedger({ parts: [part(1, 10, { campaign_id: 'c-smpp-1' })], recipients: [rec] }, NOW_MS, options);
  ledger.applyReceipt(1, { status, final: true, errorCode });
  return ledger.plan();
}

describe('receipts for SMPP customers in the part-change plan', () => {
  it('a final receipt queues a deliver_sm row for the account, not a webhook, expiring after the retention', () => {
    const plan = receiptOn(smppRecipient(1), 'DELIVRD', '000');
    expect(plan.outbox).toEqual([]);
    expect(plan.recipients).toEqual([{ recipientId: 10, status: 'delivered', lastStatus: 'DELIVRD' }]);
    expect(plan.customerDeliveries).toHaveLength(1);
    const row = plan.customerDeliveries![0]!;
    expect(row).toMatchObject({ accountId: 3, kind: 'receipt', messageId: 'c-smpp-1', createdAtMs: NOW_MS, expiresAtMs: NOW_MS + 72 * HOUR_MS });
    const deliverSm = parseDeliverSm(row.deliverSm);
    expect(deliverSm).toMatchObject({ sourceAddr: '3538700000010', destinationAddr: 'ACME', destAddrTon: 5, destAddrNpi: 0, esmClass: 0x04, receiptedMessageId: 'c-smpp-1', messageState: MESSAGE_STATE.DELIVRD });
    expect(decodeGsm7Septets(Buffer.from(deliverSm.shortMessageHex, 'hex'))).toMatch(/^id:c-smpp-1 sub:001 dlvrd:001 .* stat:DELIVRD err:000 text:Your code is 4821$/);
  });

  it('takes the retention from the engine config', () => {
    const plan = receiptOn(smppRecipient(1), 'DELIVRD', null, { receiptRetentionHours: 2 });
    expect(plan.customerDeliveries?.[0]?.expiresAtMs).toBe(NOW_MS + 2 * HOUR_MS);
  });

  it('registered_delivery 1: every final outcome; 2: failures only; 0: none (never a webhook either)', () => {
    expect(receiptOn(smppRecipient(1), 'UNDELIV', '001').customerDeliveries).toHaveLength(1);
    expect(receiptOn(smppRecipient(2), 'UNDELIV', '001').customerDeliveries).toHaveLength(1);
    expect(receiptOn(smppRecipient(2), 'DELIVRD', '000').customerDeliveries).toBeUndefined();
    for (const asked of [0, 0x10]) {
      const plan = receiptOn(smppRecipient(asked), 'UNDELIV', '001');
      expect(plan.customerDeliveries).toBeUndefined();
      expect(plan.outbox).toEqual([]);
      expect(plan.recipients).toEqual([{ recipientId: 10, status: 'undelivered', lastStatus: 'UNDELIV' }]);
    }
  });

  it('an intermediate receipt sends nothing to the customer', () => {
    const ledger = new PartChangeLedger({ parts: [part(1, 10)], recipients: [smppRecipient(1)] }, NOW_MS);
    ledger.applyReceipt(1, { status: 'ENROUTE', final: false, errorCode: null });
    const plan = ledger.plan();
    expect(plan.recipients).toEqual([{ recipientId: 10, status: 'pending', lastStatus: 'ENROUTE' }]);
    expect(plan.customerDeliveries).toBeUndefined();
    expect(plan.outbox).toEqual([]);
  });

  it('an HTTP campaign\'s recipient still gets its webhook and no deliver_sm', () => {
    const plan = receiptOn(recipient(10, { smpp_account_id: null }), 'DELIVRD', null);
    expect(plan.outbox).toHaveLength(1);
    expect(plan.customerDeliveries).toBeUndefined();
  });

  it('a submit refused upstream (its retries spent or permanent) becomes a REJECTD or UNDELIV receipt from the outcome step', () => {
    const claimed = { id: 1, recipient_id: 10, campaign_id: 'c-smpp-1', part_number: 1, parts_total: 1, attempts: 0, transport: 'carrier' } as const;
    const facts = { parts: [part(1, 10, { state: 'submitting' })], recipients: [smppRecipient(1)], unmatched: [] };
    const plan = planOutcomes([{ transport: 'carrier', parts: [claimed as never], outcomes: [{ part: 1, kind: 'permanent', status: 'ESME_RINVDSTADR', errorCode: 11 }], claimedBy: null }],
      facts, { config: { ...ENGINE_DEFAULTS, receiptRetentionHours: 1 }, stopping: false, nowMs: NOW_MS });
    const row = plan.changes.customerDeliveries?.[0];
    expect(row?.expiresAtMs).toBe(NOW_MS + HOUR_MS);
    const deliverSm = parseDeliverSm(row?.deliverSm ?? '{}');
    expect(deliverSm.messageState).toBe(MESSAGE_STATE.REJECTD);
    expect(decodedText(deliverSm.shortMessageHex)).toContain('stat:REJECTD err:011');
    expect(plan.changes.outbox).toEqual([]);
  });

  it('a lower-case stat:delivrd: the customer\'s receipt says what the recipient\'s state says (not delivered), never DELIVRD', () => {
    const plan = receiptOn(smppRecipient(1), 'delivrd', '000');
    expect(plan.recipients).toEqual([{ recipientId: 10, status: 'undelivered', lastStatus: 'delivrd' }]);
    const deliverSm = parseDeliverSm(plan.customerDeliveries?.[0]?.deliverSm ?? '{}');
    expect(deliverSm.messageState).toBe(MESSAGE_STATE.UNDELIV);
    expect(decodedText(deliverSm.shortMessageHex)).toMatch(/ dlvrd:000 .* stat:UNDELIV err:000 /);
  });

  it('a stored submit whose cut cannot be read is logged, and nothing is sent', () => {
    const plan = receiptOn(smppRecipient(1, { smpp_submit: '{not json' }), 'DELIVRD', null);
    expect(plan.customerDeliveries).toBeUndefined();
    expect(plan.logs.map((l) => l.level)).toEqual(['warn']);
    // The planner refuses a cut whose data_coding is not 0, 3 or 8: the receipt writer reads it the same way.
    const badCoding = receiptOn(smppRecipient(1, { smpp_submit: JSON.stringify({ dataCoding: 4, concat: null, registeredDelivery: 1, sourceAddrTon: 5, sourceAddrNpi: 0 }) }), 'DELIVRD', null);
    expect(badCoding.customerDeliveries).toBeUndefined();
    expect(badCoding.logs.map((l) => l.level)).toEqual(['warn']);
  });
});

function decodedText(hex: string | undefined): string {
  return decodeGsm7Septets(Buffer.from(hex ?? '', 'hex'));
}
