/** Septet packing (TS 23.038 §6.1.2.1.1) and fill bits after a UDH (TS 23.040 §9.2.3.24). */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { encodeGsm7Septets, fillBitsAfterUdh, packSeptets, unpackSeptets } from '../../src/sms/index.js';

const hex = (octets: Uint8Array): string => Buffer.from(octets).toString('hex').toUpperCase();

describe('packSeptets / unpackSeptets', () => {
  test('packs "hellohello" to the well-known E8329BFD4697D9EC37', () => {
    const septets = encodeGsm7Septets('hellohello');
    expect(hex(packSeptets(septets))).toBe('E8329BFD4697D9EC37');
    expect(Array.from(unpackSeptets(Buffer.from('E8329BFD4697D9EC37', 'hex'), 10))).toEqual(Array.from(septets));
  });

  test('8 septets fill exactly 7 octets', () => {
    expect(packSeptets(new Uint8Array(8).fill(0x7f))).toEqual(new Uint8Array(7).fill(0xff));
  });

  test('one fill bit shifts the first septet up by one bit (after a 6-octet concatenation UDH)', () => {
    expect(hex(packSeptets(Uint8Array.of(0x41), 1))).toBe('82');
    expect(hex(packSeptets(Uint8Array.of(0x41, 0x42), 1))).toBe('8242');
    expect(Array.from(unpackSeptets(Uint8Array.of(0x82, 0x42), 2, 1))).toEqual([0x41, 0x42]);
  });

  test('six fill bits put the first septet across the first two octets', () => {
    expect(hex(packSeptets(Uint8Array.of(0x7f), 6))).toBe('C01F');
  });

  test('round-trips any septets with every fill-bit count 0..6', () => {
    fc.assert(
      fc.property(fc.uint8Array({ max: 0x7f, maxLength: 200 }), fc.integer({ min: 0, max: 6 }), (septets, fillBits) => {
        const octets = packSeptets(septets, fillBits);
        expect(octets.length).toBe(Math.ceil((fillBits + septets.length * 7) / 8));
        expect(unpackSeptets(octets, septets.length, fillBits)).toEqual(septets);
      }),
      { numRuns: 500 },
    );
  });

  test('too few octets for the septet count is SMS_SHORT_USER_DATA', () => {
    expect(() => unpackSeptets(Uint8Array.of(0xe8, 0x32), 3)).toThrow(expect.objectContaining({ code: 'SMS_SHORT_USER_DATA' }));
  });

  test('a value above 127 is refused, not masked', () => {
    expect(() => packSeptets(Uint8Array.of(0x80))).toThrow(expect.objectContaining({ code: 'SMS_BAD_SEPTET' }));
  });

  test.each([-1, 7, 1.5])('fill bits %d are refused', (fillBits) => {
    expect(() => packSeptets(Uint8Array.of(1), fillBits)).toThrow(expect.objectContaining({ code: 'SMS_BAD_FILL_BITS' }));
    expect(() => unpackSeptets(Uint8Array.of(1, 1), 1, fillBits)).toThrow(expect.objectContaining({ code: 'SMS_BAD_FILL_BITS' }));
  });
});

describe('fillBitsAfterUdh (TS 23.040 §9.2.3.24)', () => {
  test.each([
    [0, 0],
    [6, 1], // 05 00 03 ref total seq: 48 bits, 1 fill bit to 49
    [7, 0], // 06 08 04 refHi refLo total seq: 56 bits, already a septet boundary
    [4, 3], // 03 24 01 id: 32 bits, 3 fill bits to 35
    [9, 5], // concat 8-bit + one shift IE: 72 bits, 5 fill bits to 77
    [12, 2], // concat 8-bit + two shift IEs: 96 bits, 2 fill bits to 98
    [1, 6],
  ])('a UDH of %i octets needs %i fill bits', (udhOctets, fillBits) => {
    expect(fillBitsAfterUdh(udhOctets)).toBe(fillBits);
    expect((udhOctets * 8 + fillBits) % 7).toBe(0);
  });
});
