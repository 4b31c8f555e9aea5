import { describe, expect, it } from 'vitest';
import { isDeliveredStatus, parseReceiptText, parseSmppReceipt } from '../../src/receipts/index.js';
import { OTHER_SMSC_RECEIPTS } from './fixtures/other-smscs.js';

describe('receipt texts as other SMPP stacks write them', () => {
  it.each(OTHER_SMSC_RECEIPTS.map((fixture) => [fixture.name, fixture] as const))('%s', (_name, fixture) => {
    const fields = parseReceiptText(fixture.text);
    expect(fields.id).toBe(fixture.expected.id);
    expect(fields.stat).toBe(fixture.expected.stat);
    expect(fields.err).toBe(fixture.expected.err);
    expect(fields.text).toBe(fixture.expected.text);
    const parsed = parseSmppReceipt({ text: fixture.text }, 'as-is');
    if (!parsed.ok) throw new Error(`refused: ${parsed.reason}`);
    expect(parsed.receipt.status).toBe(fixture.expected.stat);
    expect(isDeliveredStatus(parsed.receipt.status)).toBe(fixture.expected.stat.startsWith('DELIV'));
    if (fixture.expected.doneAt !== undefined) expect(parsed.receipt.doneAt).toBe(fixture.expected.doneAt);
    if (fixture.expected.err !== undefined) expect(parsed.receipt.errorCode).toBe(fixture.expected.err);
  });

  it('takes a stat: before text: over any stat: inside the text', () => {
    const fields = parseReceiptText('id:9 stat:UNDELIV err:001 text:stat:DELIVRD');
    expect(fields.stat).toBe('UNDELIV');
    expect(fields.text).toBe('stat:DELIVRD');
  });

  it('takes the last stat: after text: when none stands before it', () => {
    const fields = parseReceiptText('id:9 text:stat:UNDELIV stat:EXPIRED stat:DELIVRD');
    expect(fields.stat).toBe('DELIVRD');
    expect(fields.text).toBe('stat:UNDELIV stat:EXPIRED');
  });

  it('reads a text-first receipt with no fields after the text as text to the end', () => {
    const fields = parseReceiptText('id:9 text:hello there');
    expect(fields.stat).toBeUndefined();
    expect(fields.text).toBe('hello there');
  });

  it('keeps an empty err: empty instead of taking the next label as its value', () => {
    expect(parseReceiptText('id:9 stat:DELIVRD err: text:x')).toMatchObject({ err: '', text: 'x' });
  });
});
