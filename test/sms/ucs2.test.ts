/** UCS-2 as SMS carries it: UTF-16 big-endian code units. */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { decodeUcs2, encodeUcs2 } from '../../src/sms/index.js';

test('encodes big-endian, an emoji as its surrogate pair', () => {
  expect(Buffer.from(encodeUcs2('Aж\u{1F600}')).toString('hex')).toBe('00410436d83dde00');
  expect(decodeUcs2(Buffer.from('00410436d83dde00', 'hex'))).toBe('Aж\u{1F600}');
});

test('round-trips any UTF-16 string, lone surrogates included', () => {
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
    expect(decodeUcs2(encodeUcs2(text))).toBe(text);
  }));
});

test('an odd number of octets is SMS_BAD_UCS2, not a dropped octet', () => {
  expect(() => decodeUcs2(Uint8Array.of(0, 0x41, 0))).toThrow(expect.objectContaining({ code: 'SMS_BAD_UCS2' }));
});
