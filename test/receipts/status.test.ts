import { describe, expect, it } from 'vitest';
import {
  fitStatus,
  fullReceiptStatus,
  isDeliveredStatus,
  parseReceiptText,
  isFinalStatus,
  MAX_STATUS_CHARS,
  receiptStatus,
  statusFromTpStatus,
} from '../../src/receipts/index.js';

describe('receiptStatus', () => {
  it('passes an alphabetic stat: through with its case unchanged', () => {
    expect(receiptStatus({ stat: 'Delivered', rawText: 'id:1 stat:Delivered' })).toBe('Delivered');
    expect(receiptStatus({ stat: 'UNDELIV', rawText: '' })).toBe('UNDELIV');
  });

  it('prefers the message_state TLV, named per SMPP 3.4 §5.2.28', () => {
    const names = [1, 2, 3, 4, 5, 6, 7, 8].map((state) => receiptStatus({ messageState: state, stat: 'x', rawText: '' }));
    expect(names).toEqual(['ENROUTE', 'DELIVRD', 'EXPIRED', 'DELETED', 'UNDELIV', 'ACCEPTD', 'UNKNOWN', 'REJECTD']);
  });

  it('falls back to stat: when message_state is not an SMPP 3.4 value', () => {
    expect(receiptStatus({ messageState: 9, stat: 'SKIPPED', rawText: '' })).toBe('SKIPPED');
  });

  it('uses a non-alphabetic stat: value as sent', () => {
    expect(receiptStatus({ stat: '2', rawText: 'id:1 stat:2' })).toBe('2');
  });

  it('uses the raw text when no stat: can be read', () => {
    expect(receiptStatus({ rawText: '  message failed  ' })).toBe('message failed');
    expect(receiptStatus({ rawText: '' })).toBe('UNKNOWN');
  });
});

describe('fitStatus', () => {
  it('keeps a 30-character status whole', () => {
    const status = 'A'.repeat(MAX_STATUS_CHARS);
    expect(fitStatus(status)).toEqual({ status });
  });

  it('keeps the first 30 characters of a longer status and reports the original length', () => {
    expect(fitStatus('B'.repeat(31) + 'C')).toEqual({ status: 'B'.repeat(30), truncatedFromChars: 32 });
  });

  it('counts characters, not UTF-16 code units', () => {
    const status = '😀'.repeat(30);
    expect(fitStatus(status)).toEqual({ status });
  });
});

describe('isDeliveredStatus and isFinalStatus', () => {
  it('counts a status as delivered when it begins with DELIV', () => {
    expect(isDeliveredStatus('DELIVRD')).toBe(true);
    expect(isDeliveredStatus('DELIVERED')).toBe(true);
    expect(isDeliveredStatus('UNDELIV')).toBe(false);
    expect(isDeliveredStatus('delivrd')).toBe(false);
  });

  it('treats ENROUTE and ACCEPTD as intermediate and the SMPP end states as final', () => {
    expect(isFinalStatus('ENROUTE')).toBe(false);
    expect(isFinalStatus('ACCEPTD')).toBe(false);
    expect(isFinalStatus('enroute')).toBe(false);
    for (const status of ['DELIVRD', 'UNDELIV', 'EXPIRED', 'DELETED', 'REJECTD', 'UNKNOWN', 'SOMETHING ELSE']) {
      expect(isFinalStatus(status), status).toBe(true);
    }
  });
});

describe('statusFromTpStatus (3GPP TS 23.040 §9.2.3.15)', () => {
  it.each([
    [0x00, 'DELIVRD'], [0x01, 'DELIVRD'], [0x02, 'DELIVRD'],
    [0x20, 'ENROUTE'], [0x3f, 'ENROUTE'],
    [0x40, 'UNDELIV'], [0x41, 'REJECTD'], [0x42, 'UNDELIV'], [0x43, 'REJECTD'], [0x44, 'UNDELIV'], [0x46, 'EXPIRED'], [0x47, 'UNDELIV'], [0x5f, 'UNDELIV'],
    [0x60, 'UNDELIV'], [0x7f, 'UNDELIV'],
    [0x03, 'UNKNOWN'], [0x10, 'UNKNOWN'], [0x1f, 'UNKNOWN'], [0x80, 'UNKNOWN'], [0xff, 'UNKNOWN'],
  ])('maps TP-ST 0x%s to %s', (tpSt, status) => {
    expect(statusFromTpStatus(tpSt)).toBe(status);
  });

  it('reports temporary errors as not final and delivery as delivered', () => {
    expect(isFinalStatus(statusFromTpStatus(0x21))).toBe(false);
    expect(isDeliveredStatus(statusFromTpStatus(0x00))).toBe(true);
    expect(isFinalStatus(statusFromTpStatus(0x65))).toBe(true);
  });
});

describe('receiptStatus input forms', () => {
  it('takes the receipt text itself', () => {
    expect(receiptStatus('id:1 sub:001 stat:Delivered err:000')).toBe('Delivered');
  });

  it('takes parseReceiptText output and a message_state TLV', () => {
    expect(receiptStatus(parseReceiptText('id:1 stat:DELIVRD'), { messageState: 8 })).toBe('REJECTD');
  });

  it('returns at most 30 characters of a long raw status', () => {
    const text = 'the carrier could not deliver the message because of reasons';
    expect(receiptStatus(text)).toBe(text.slice(0, 30));
    expect(fullReceiptStatus({ raw: text })).toBe(text);
  });
});
