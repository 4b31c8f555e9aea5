import { describe, expect, it } from 'vitest';
import { parseReceiptDate, parseSmppReceipt } from '../../src/receipts/index.js';

describe('parseSmppReceipt', () => {
  const text = 'id:00FF sub:001 dlvrd:001 submit date:2311211530 done date:2311211531 stat:DELIVRD err:000 text:hi';

  it('reads id, status, error and done date from the text', () => {
    expect(parseSmppReceipt({ text }, 'as-is')).toEqual({
      ok: true,
      receipt: { messageId: 'FF', status: 'DELIVRD', final: true, errorCode: '000', doneAt: '2023-11-21T15:31:00.000Z', raw: text },
    });
  });

  it('prefers receipted_message_id and message_state TLVs', () => {
    const result = parseSmppReceipt({ text, receiptedMessageId: '255', messageState: 5 }, 'dec-to-hex');
    expect(result.ok && result.receipt.messageId).toBe('FF');
    expect(result.ok && result.receipt.status).toBe('UNDELIV');
  });

  it('applies the carrier id conversion to the receipt id', () => {
    const result = parseSmppReceipt({ text }, 'hex-to-dec');
    expect(result.ok && result.receipt.messageId).toBe('255');
  });

  it('fits a long raw status to 30 characters and says so', () => {
    const raw = 'id:9 the carrier says this message could not be delivered';
    const result = parseSmppReceipt({ text: raw }, 'as-is');
    expect(result.ok && result.receipt.status).toBe('id:9 the carrier says this mes');
    expect(result.ok && result.receipt.truncatedFromChars).toBe(raw.length);
  });

  it('is a coded failure when there is no message id at all', () => {
    expect(parseSmppReceipt({ text: 'stat:DELIVRD' }, 'as-is')).toEqual({ ok: false, reason: 'NO_MESSAGE_ID', raw: 'stat:DELIVRD' });
  });
});

describe('parseReceiptDate', () => {
  it('reads YYMMDDhhmm and YYMMDDhhmmss as UTC', () => {
    expect(parseReceiptDate('2402291259')).toBe('2024-02-29T12:59:00.000Z');
    expect(parseReceiptDate('240229125907')).toBe('2024-02-29T12:59:07.000Z');
  });

  it('rejects impossible dates', () => {
    expect(parseReceiptDate('2302291259')).toBeUndefined();
    expect(parseReceiptDate('2301012460')).toBeUndefined();
    expect(parseReceiptDate('abc')).toBeUndefined();
  });

  it('applies the Gregorian leap rules and every field range, as the calendar does', () => {
    expect(parseReceiptDate('20000229000000')).toBe('2000-02-29T00:00:00.000Z');
    expect(parseReceiptDate('21000229000000')).toBeUndefined();
    expect(parseReceiptDate('2404310000')).toBeUndefined();
    expect(parseReceiptDate('2412310000')).toBe('2024-12-31T00:00:00.000Z');
    expect(parseReceiptDate('2413010000')).toBeUndefined();
    expect(parseReceiptDate('2400010000')).toBeUndefined();
    expect(parseReceiptDate('2401002359')).toBeUndefined();
    expect(parseReceiptDate('240101235960')).toBeUndefined();
    expect(parseReceiptDate('2401012400')).toBeUndefined();
  });

  it('gives the same instant as Date.UTC for every minute of a leap year', () => {
    let checked = 0;
    for (let t = Date.UTC(2024, 0, 1); t < Date.UTC(2025, 0, 1); t += 60_000 * 7) {
      const d = new Date(t);
      const two = (n: number): string => String(n).padStart(2, '0');
      const digits = `${two(d.getUTCFullYear() % 100)}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}`;
      expect(parseReceiptDate(digits)).toBe(d.toISOString());
      checked++;
    }
    expect(checked).toBe(75_292);
  });
});
