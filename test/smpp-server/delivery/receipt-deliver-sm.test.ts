import { describe, expect, it } from 'vitest';
import { isDeliveredStatus, parseSmppReceipt } from '../../../src/receipts/index.js';
import { MESSAGE_STATE } from '../../../src/smpp-server/contracts.js';
import { receiptDeliverSm, receiptOutcomeOf, type ReceiptDeliverSmInput } from '../../../src/smpp-customer/receipt-deliver-sm.js';
import { decodeGsm7Septets } from '../../../src/sms/gsm7.js';

const SUBMITTED_MS = Date.UTC(2026, 10, 26, 8, 45, 31);
const DONE_MS = Date.UTC(2026, 10, 26, 9, 2, 7);

function build(lastStatus: string, carrierErr: string | null, text = 'Hello from ACME, your code is 1234'): ReturnType<typeof receiptDeliverSm> {
  const input: ReceiptDeliverSmInput = {
    messageId: 'c-7f3a', recipientMsisdn: '353871234567', customerSourceAddr: 'ACME', cut: { sourceAddrTon: 5, sourceAddrNpi: 0 },
    outcome: receiptOutcomeOf(isDeliveredStatus(lastStatus), lastStatus, carrierErr), submittedAtMs: SUBMITTED_MS, doneAtMs: DONE_MS, text,
  };
  return receiptDeliverSm(input);
}

function textOf(fields: ReturnType<typeof receiptDeliverSm>): string {
  return decodeGsm7Septets(Buffer.from(fields.shortMessageHex, 'hex'));
}

describe('a customer receipt as deliver_sm', () => {
  it('a delivered message: handset to the customer\'s sender with its ton/npi, esm_class 0x04, Appendix B text and both TLVs', () => {
    const fields = build('DELIVRD', '000');
    expect(fields).toEqual({
      sourceAddrTon: 1, sourceAddrNpi: 1, sourceAddr: '353871234567', destAddrTon: 5, destAddrNpi: 0, destinationAddr: 'ACME',
      esmClass: 0x04, dataCoding: 0, shortMessageHex: fields.shortMessageHex, receiptedMessageId: 'c-7f3a', messageState: MESSAGE_STATE.DELIVRD,
    });
    expect(textOf(fields)).toBe('id:c-7f3a sub:001 dlvrd:001 submit date:2611260845 done date:2611260902 stat:DELIVRD err:000 text:Hello from ACME, you');
  });

  it('an undelivered message keeps the carrier\'s error code, three digits', () => {
    const fields = build('UNDELIV', '27');
    expect(textOf(fields)).toBe('id:c-7f3a sub:001 dlvrd:000 submit date:2611260845 done date:2611260902 stat:UNDELIV err:027 text:Hello from ACME, you');
    expect(fields.messageState).toBe(MESSAGE_STATE.UNDELIV);
  });

  it('an expired message', () => {
    const fields = build('EXPIRED', null);
    expect(textOf(fields)).toBe('id:c-7f3a sub:001 dlvrd:000 submit date:2611260845 done date:2611260902 stat:EXPIRED err:000 text:Hello from ACME, you');
    expect(fields.messageState).toBe(MESSAGE_STATE.EXPIRED);
  });

  it('a message the upstream SMSC rejected at submit: REJECTD with the command_status as err', () => {
    const fields = build('ESME_RINVDSTADR', '11');
    expect(textOf(fields)).toBe('id:c-7f3a sub:001 dlvrd:000 submit date:2611260845 done date:2611260902 stat:REJECTD err:011 text:Hello from ACME, you');
    expect(fields.messageState).toBe(MESSAGE_STATE.REJECTD);
  });

  it('maps every kind of final status once', () => {
    const cases: [string, string | null, string, string, number][] = [
      ['DELIVRD', null, 'DELIVRD', '000', 2],
      ['DELIVERED', '0', 'DELIVRD', '000', 2],
      // The engine counts only a status beginning DELIV (case as received) delivered; the receipt follows it.
      ['delivrd', null, 'UNDELIV', '000', 5],
      ['UNDELIVERABLE', null, 'UNDELIV', '000', 5],
      ['REJECTED', '5', 'REJECTD', '005', 8],
      ['DELETED', null, 'DELETED', '000', 4],
      ['UNKNOWN', null, 'UNKNOWN', '000', 7],
      // Temporary refusals whose retries were spent: not delivered, not a rejection of the message itself.
      ['ESME_RTHROTTLED', '88', 'UNDELIV', '088', 5],
      ['ESME_RINVSRCADR', null, 'REJECTD', '010', 8],
      ['ESME_0x00000400', null, 'REJECTD', '000', 8],
      ['NO_ROUTE', null, 'UNDELIV', '000', 5],
      ['NO_OUTCOME', null, 'UNDELIV', '000', 5],
      ['UNDELIV', 'X-99', 'UNDELIV', '000', 5],
    ];
    for (const [status, err, stat, errOut, state] of cases) {
      expect(receiptOutcomeOf(isDeliveredStatus(status), status, err), status).toEqual({ stat, err: errOut, messageState: state, delivered: stat === 'DELIVRD' });
    }
  });

  it('reads back through our own receipt parser with the same id, status, error and done date', () => {
    const fields = build('UNDELIV', '27');
    const parsed = parseSmppReceipt({ text: textOf(fields), receiptedMessageId: fields.receiptedMessageId, messageState: fields.messageState }, 'as-is');
    expect(parsed).toMatchObject({ ok: true, receipt: { messageId: 'C-7F3A', status: 'UNDELIV', final: true, errorCode: '027', doneAt: '2026-11-26T09:02:00.000Z' } });
  });

  it('quotes at most 20 characters, and stops before a character data_coding 0 cannot carry', () => {
    expect(textOf(build('DELIVRD', null, 'short'))).toMatch(/ text:short$/);
    expect(textOf(build('DELIVRD', null, 'Price: 5€ {ok}'))).toMatch(/ text:Price: 5€ \{ok\}$/);
    expect(textOf(build('DELIVRD', null, 'Код 1234'))).toMatch(/ text:$/);
    expect(textOf(build('DELIVRD', null, 'ok Код'))).toMatch(/ text:ok $/);
  });
});
