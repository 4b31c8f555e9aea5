import { describe, expect, it } from 'vitest';
import { parseReceiptText } from '../../src/receipts/index.js';

const APPENDIX_B =
  'id:0123456789 sub:001 dlvrd:001 submit date:2311211530 done date:2311211531 stat:DELIVRD err:000 text:Hello world';

describe('parseReceiptText', () => {
  it('reads every SMPP 3.4 Appendix B field', () => {
    expect(parseReceiptText(APPENDIX_B)).toEqual({
      raw: APPENDIX_B,
      recognised: true,
      id: '0123456789',
      sub: '001',
      dlvrd: '001',
      submitDate: '2311211530',
      doneDate: '2311211531',
      stat: 'DELIVRD',
      err: '000',
      text: 'Hello world',
    });
  });

  it('accepts labels in any case and any order, with spaces around the colon', () => {
    const parsed = parseReceiptText('STAT : undeliv Err:012 Done Date:2311211531 ID: abc-42 SUB:001');
    expect(parsed.stat).toBe('undeliv');
    expect(parsed.err).toBe('012');
    expect(parsed.doneDate).toBe('2311211531');
    expect(parsed.id).toBe('abc-42');
    expect(parsed.sub).toBe('001');
  });

  it('tolerates missing fields', () => {
    const parsed = parseReceiptText('id:77 stat:EXPIRED');
    expect(parsed).toEqual({ raw: 'id:77 stat:EXPIRED', recognised: true, id: '77', stat: 'EXPIRED' });
  });

  it('keeps everything after text: as the text, including labels', () => {
    const parsed = parseReceiptText('id:1 stat:DELIVRD text:stat:UNDELIV id:2 err:9 ');
    expect(parsed.id).toBe('1');
    expect(parsed.stat).toBe('DELIVRD');
    expect(parsed.err).toBeUndefined();
    expect(parsed.text).toBe('stat:UNDELIV id:2 err:9 ');
  });

  it('does not take a misspelt label for a field', () => {
    const parsed = parseReceiptText('id:5 stat us:DELIVRD sta:DELIVRD');
    expect(parsed.stat).toBeUndefined();
    expect(parsed.id).toBe('5');
  });

  it('does not see a label inside another word', () => {
    const parsed = parseReceiptText('id:5 substat:DELIVRD');
    expect(parsed.sub).toBeUndefined();
    expect(parsed.stat).toBeUndefined();
  });

  it('reports text with no known label as unrecognised', () => {
    expect(parseReceiptText('delivered OK')).toEqual({ raw: 'delivered OK', recognised: false });
  });

  it('keeps the first value when a label repeats', () => {
    expect(parseReceiptText('stat:DELIVRD stat:UNDELIV').stat).toBe('DELIVRD');
  });

  it('gives the same fields for a receipt read whole and built up one character at a time', () => {
    // The text reaches the parser whole (the SMPP framer hands over complete PDUs); building it
    // one character at a time checks that no prefix is mistaken for a complete receipt field.
    let text = '';
    for (const char of APPENDIX_B) text += char;
    expect(parseReceiptText(text)).toEqual(parseReceiptText(APPENDIX_B));
    const prefix = APPENDIX_B.slice(0, APPENDIX_B.indexOf('stat:') + 'stat:DELIV'.length);
    expect(parseReceiptText(prefix).stat).toBe('DELIV');
  });
});
