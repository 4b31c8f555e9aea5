/** Every row of the msisdn table in the README (SPEC "Recipient" msisdn rules). */
import { describe, expect, test } from 'vitest';
import { normalizeMsisdn } from '../../src/sms/index.js';

describe('normalizeMsisdn: accepted values', () => {
  test.each([
    // Irish numbers in every supported form
    ['0871234567', '353871234567'],
    ['353871234567', '353871234567'],
    ['+353871234567', '353871234567'],
    ['00353871234567', '353871234567'],
    ['3530871234567', '353871234567'],
    ['+3530871234567', '353871234567'],
    ['003530871234567', '353871234567'],
    // UK mobiles
    ['07700900123', '447700900123'],
    ['447700900123', '447700900123'],
    ['+447700900123', '447700900123'],
    ['00447700900123', '447700900123'],
    ['4407700900123', '447700900123'],
    ['+4407700900123', '447700900123'],
    ['004407700900123', '447700900123'],
    // everything else digits-only is unchanged (after '+' / '00' removal)
    ['12025550123', '12025550123'],
    ['+12025550123', '12025550123'],
    ['0012025550123', '12025550123'],
    ['087123456', '087123456'], // leading 0 but 9 digits: not an Irish national mobile form
    ['08712345678', '08712345678'], // leading 0 but 11 digits and not 07
    ['02012345678', '02012345678'], // UK landline in national form: not converted
    ['0', '0'],
    ['5', '5'],
    // edge cases decided for smsgate
    ['+0871234567', '353871234567'], // '+' is removed first, then the national rule applies
    ['000871234567', '353871234567'], // '00' is removed first, then the national rule applies
    ['+00353871234567', '353871234567'], // '+' then '00' are both removed
    ['3530', '353'],
    ['440', '44'],
    ['0000', '00'], // one '00' prefix is removed, not more
    ['+1234567890123456789', '1234567890123456789'], // 20 characters with the '+'
    ['12345678901234567890', '12345678901234567890'], // 20 digits
  ])('%s becomes %s', (raw, msisdn) => {
    expect(normalizeMsisdn(raw)).toEqual({ ok: true, msisdn });
  });
});

describe('normalizeMsisdn: rejected values', () => {
  test.each([
    ['', 'empty'],
    ['+', "digits with an optional leading '+'"],
    ['00', 'no digits after the international prefix'],
    ['+00', 'no digits after the international prefix'],
    ['123456789012345678901', 'longer than 20'],
    ['+12345678901234567890', 'longer than 20'],
    ['087 123 4567', "digits with an optional leading '+'"],
    ['087-123-4567', "digits with an optional leading '+'"],
    ['(087)1234567', "digits with an optional leading '+'"],
    ['++353871234567', "digits with an optional leading '+'"],
    ['353+871234567', "digits with an optional leading '+'"],
    ['353871234567 ', "digits with an optional leading '+'"],
    ['٠٨٧١٢٣٤٥٦٧', "digits with an optional leading '+'"], // Arabic-Indic digits are not ASCII digits
    ['abc', "digits with an optional leading '+'"],
  ])('%j is refused (%s)', (raw, reason) => {
    const result = normalizeMsisdn(raw);
    expect(result).toMatchObject({ ok: false, reason: expect.stringContaining(reason) });
  });
});
