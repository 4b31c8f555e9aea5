/** Sender id rules (SPEC `from`) and SMPP addressing (SMPP 3.4 §5.2.5 / §5.2.6). */
import { describe, expect, test } from 'vitest';
import { validateSender } from '../../src/sms/index.js';

const ALPHANUMERIC = { kind: 'alphanumeric', ton: 5, npi: 0 } as const;
const SHORTCODE = { kind: 'shortcode', ton: 3, npi: 0 } as const;
const INTERNATIONAL = { kind: 'international', ton: 1, npi: 1 } as const;

describe('validateSender: accepted', () => {
  test.each([
    ['MyShop', 'MyShop', ALPHANUMERIC],
    ['  MyShop \t', 'MyShop', ALPHANUMERIC], // trimmed
    ['My Shop', 'My Shop', ALPHANUMERIC], // inner space kept
    ['ABCDEFGHIJK', 'ABCDEFGHIJK', ALPHANUMERIC], // 11 characters
    ['Shop-24/7!#', 'Shop-24/7!#', ALPHANUMERIC], // any characters
    ['Café€', 'Café€', ALPHANUMERIC],
    ['\u{1F600}'.repeat(11), '\u{1F600}'.repeat(11), ALPHANUMERIC], // 11 characters (code points), 22 UTF-16 units
    ['+3538712345', '+3538712345', ALPHANUMERIC], // not digits-only: the 11-character rule
    ['A1', 'A1', ALPHANUMERIC],
    ['1', '1', SHORTCODE],
    ['12345', '12345', SHORTCODE],
    ['49999', '49999', SHORTCODE],
    ['60000', '60000', SHORTCODE],
    ['500000', '500000', SHORTCODE], // six digits: 500000 is not in 50000..59999
    ['5000', '5000', SHORTCODE],
    ['12345678', '12345678', SHORTCODE], // 8 digits: still a short code
    ['123456789', '123456789', INTERNATIONAL], // 9 digits: international
    ['353871234567', '353871234567', INTERNATIONAL],
    ['  353871234567  ', '353871234567', INTERNATIONAL],
    ['12345678901234567890', '12345678901234567890', INTERNATIONAL], // 20 digits
  ])('%j is %j', (raw, value, addressing) => {
    expect(validateSender(raw)).toEqual({ ok: true, value, ...addressing });
  });
});

describe('validateSender: refused', () => {
  test.each([
    ['', 'non-whitespace'],
    ['   ', 'non-whitespace'],
    ['\t\n', 'non-whitespace'],
    ['ABCDEFGHIJKL', 'at most 11 characters'],
    ['\u{1F600}'.repeat(12), 'at most 11 characters'],
    ['+353871234567', 'at most 11 characters'],
    ['123456789012345678901', 'at most 20 digits'],
    ['50000', 'reserved'],
    ['55555', 'reserved'],
    ['59999', 'reserved'],
    ['050000', 'reserved'], // compared as a number: leading zeros do not escape the range
    ['0059999', 'reserved'],
    [' 50000 ', 'reserved'],
  ])('%j is refused (%s)', (raw, reason) => {
    const result = validateSender(raw);
    expect(result).toMatchObject({ ok: false, reason: expect.stringContaining(reason) });
  });
});
