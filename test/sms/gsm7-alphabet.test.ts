/**
 * The GSM 7 bit default alphabet and extension table against 3GPP TS 23.038 §6.2.1 / §6.2.1.1,
 * transcribed here independently as Unicode code points so the test is not the code's own table.
 */
import { describe, expect, test } from 'vitest';
import { GatewayError } from '../../src/common/errors.js';
import {
  GSM7_DEFAULT_TABLE,
  decodeGsm7Septets,
  encodeGsm7Septets,
  packSeptets,
  unpackSeptets,
} from '../../src/sms/index.js';

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** TS 23.038 §6.2.1, by septet 0x00..0x7F; null at 0x1B (ESC). */
const SPEC_DEFAULT_ALPHABET: ReadonlyArray<number | null> = [
  0x0040, 0x00a3, 0x0024, 0x00a5, 0x00e8, 0x00e9, 0x00f9, 0x00ec, 0x00f2, 0x00c7, 0x000a, 0x00d8, 0x00f8, 0x000d, 0x00c5, 0x00e5,
  0x0394, 0x005f, 0x03a6, 0x0393, 0x039b, 0x03a9, 0x03a0, 0x03a8, 0x03a3, 0x0398, 0x039e, null, 0x00c6, 0x00e6, 0x00df, 0x00c9,
  0x0020, 0x0021, 0x0022, 0x0023, 0x00a4, ...range(0x25, 0x2f),
  ...range(0x30, 0x3f),
  0x00a1, ...range(0x41, 0x4f),
  ...range(0x50, 0x5a), 0x00c4, 0x00d6, 0x00d1, 0x00dc, 0x00a7,
  0x00bf, ...range(0x61, 0x6f),
  ...range(0x70, 0x7a), 0x00e4, 0x00f6, 0x00f1, 0x00fc, 0x00e0,
];

/** TS 23.038 §6.2.1.1: [extension code, code point]. */
const SPEC_EXTENSION_TABLE: ReadonlyArray<readonly [number, number]> = [
  [0x0a, 0x000c], // FORM FEED
  [0x14, 0x005e], // ^
  [0x28, 0x007b], // {
  [0x29, 0x007d], // }
  [0x2f, 0x005c], // backslash
  [0x3c, 0x005b], // [
  [0x3d, 0x007e], // ~
  [0x3e, 0x005d], // ]
  [0x40, 0x007c], // |
  [0x65, 0x20ac], // €
];

const defaultCharacters = SPEC_DEFAULT_ALPHABET.flatMap((codePoint, septet) =>
  codePoint === null ? [] : [[septet, String.fromCodePoint(codePoint)] as const],
);

describe('GSM 7 bit default alphabet (TS 23.038 §6.2.1)', () => {
  test('the table has 128 positions and matches the specification at every one', () => {
    expect(SPEC_DEFAULT_ALPHABET).toHaveLength(128);
    expect(GSM7_DEFAULT_TABLE).toHaveLength(128);
    for (const [septet, character] of defaultCharacters) expect(GSM7_DEFAULT_TABLE[septet]).toBe(character);
  });

  test.each(defaultCharacters)('septet %i (%s) encodes and decodes', (septet, character) => {
    const septets = encodeGsm7Septets(character);
    expect(Array.from(septets)).toEqual([septet]);
    expect(decodeGsm7Septets(septets)).toBe(character);
    expect(decodeGsm7Septets(unpackSeptets(packSeptets(septets), 1))).toBe(character);
  });

  test('the whole alphabet round-trips through encode, pack, unpack and decode with every fill-bit count', () => {
    const text = defaultCharacters.map(([, character]) => character).join('');
    const septets = encodeGsm7Septets(text);
    expect(septets).toHaveLength(127);
    for (let fillBits = 0; fillBits <= 6; fillBits++) {
      expect(decodeGsm7Septets(unpackSeptets(packSeptets(septets, fillBits), septets.length, fillBits))).toBe(text);
    }
  });
});

describe('GSM 7 bit extension table (TS 23.038 §6.2.1.1)', () => {
  test.each(SPEC_EXTENSION_TABLE)('ESC + code %i (code point %i) encodes as two septets and decodes back', (code, codePoint) => {
    const character = String.fromCodePoint(codePoint);
    const septets = encodeGsm7Septets(character);
    expect(Array.from(septets)).toEqual([0x1b, code]);
    expect(decodeGsm7Septets(septets)).toBe(character);
    expect(decodeGsm7Septets(unpackSeptets(packSeptets(septets, 3), 2, 3))).toBe(character);
  });

  test('a mixed text keeps every escape pair in place', () => {
    expect(Array.from(encodeGsm7Septets('a€{b'))).toEqual([0x61, 0x1b, 0x65, 0x1b, 0x28, 0x62]);
    expect(decodeGsm7Septets(Uint8Array.of(0x61, 0x1b, 0x65, 0x1b, 0x28, 0x62))).toBe('a€{b');
  });

  test('ESC then a code the table leaves undefined shows the default character (§6.2.1.1)', () => {
    expect(decodeGsm7Septets(Uint8Array.of(0x1b, 0x41))).toBe('A');
  });

  test('ESC ESC and a trailing ESC show a space', () => {
    expect(decodeGsm7Septets(Uint8Array.of(0x1b, 0x1b, 0x41))).toBe(' A');
    expect(decodeGsm7Septets(Uint8Array.of(0x41, 0x1b))).toBe('A ');
  });
});

describe('characters outside the alphabet', () => {
  test.each([
    ['ç', 'U+00E7', 2],
    ['`', 'U+0060', 1],
    ['😀', 'U+1F600', 0],
  ])('%s is refused with SMS_NOT_GSM7 naming the character', (character, codePoint, index) => {
    const text = 'ab'.slice(0, index) + character;
    let caught: unknown;
    try {
      encodeGsm7Septets(text);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(GatewayError);
    expect((caught as GatewayError).code).toBe('SMS_NOT_GSM7');
    expect((caught as GatewayError).message).toContain(character);
    expect((caught as GatewayError).details).toMatchObject({ character, codePoint, index });
  });

  test('a decoded value above 127 is SMS_BAD_SEPTET, not a substituted character', () => {
    expect(() => decodeGsm7Septets(Uint8Array.of(0x41, 0x80))).toThrow(expect.objectContaining({ code: 'SMS_BAD_SEPTET' }));
  });
});
