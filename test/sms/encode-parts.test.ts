/** UDH (TS 23.040 §9.2.3.24.1 / .8), per-part payloads, and TP-User-Data for modem PDUs. */
import { describe, expect, test } from 'vitest';
import {
  concatUdh,
  decodeGsm7Septets,
  decodeUcs2,
  encodeParts,
  encodeUcs2,
  packUserData,
  planMessage,
  unpackSeptets,
} from '../../src/sms/index.js';

const hex = (octets: Uint8Array | null): string => (octets === null ? 'null' : Buffer.from(octets).toString('hex').toUpperCase());

describe('concatUdh', () => {
  test('8-bit reference: 05 00 03 ref total seq', () => {
    expect(hex(concatUdh(0xcc, 3, 1, 8))).toBe('050003CC0301');
  });

  test('16-bit reference: 06 08 04 refHi refLo total seq', () => {
    expect(hex(concatUdh(0x1234, 2, 2, 16))).toBe('06080412340202');
  });

  test.each([
    [256, 2, 1, 8],
    [-1, 2, 1, 8],
    [65536, 2, 1, 16],
    [1, 0, 1, 8],
    [1, 256, 1, 8],
    [1, 2, 0, 8],
    [1, 2, 3, 8],
  ] as const)('reference %i, total %i, sequence %i (%i-bit) is SMS_BAD_CONCAT', (reference, total, sequence, bits) => {
    expect(() => concatUdh(reference, total, sequence, bits)).toThrow(expect.objectContaining({ code: 'SMS_BAD_CONCAT' }));
  });
});

describe('encodeParts', () => {
  test('a single part has no UDH and carries unpacked septets', () => {
    const [part, ...rest] = encodeParts(planMessage('Hi €'), { reference: 9, referenceBits: 8 });
    expect(rest).toEqual([]);
    expect(part).toEqual({ sequence: 1, total: 1, udh: null, payload: Uint8Array.of(0x48, 0x69, 0x20, 0x1b, 0x65), units: 5 });
  });

  test('GSM-7 parts carry the 8-bit concatenation UDH and decode back to the segments', () => {
    const plan = planMessage(`${'a'.repeat(152)}€${'b'.repeat(10)}`);
    const parts = encodeParts(plan, { reference: 0x42, referenceBits: 8 });
    expect(parts.map((p) => hex(p.udh))).toEqual(['0500034202' + '01', '0500034202' + '02']);
    expect(parts.map((p) => p.units)).toEqual([152, 12]);
    expect(parts.map((p) => decodeGsm7Septets(p.payload))).toEqual(plan.segments);
  });

  test('UCS-2 parts carry UTF-16BE octets; units are code units', () => {
    const plan = planMessage('ж'.repeat(71), { concatReferenceBits: 16 });
    const parts = encodeParts(plan, { reference: 0x0102, referenceBits: 16 });
    expect(parts.map((p) => hex(p.udh))).toEqual(['060804010202' + '01', '060804010202' + '02']);
    expect(parts.map((p) => p.units)).toEqual([66, 5]);
    expect(hex(parts[1]?.payload ?? null)).toBe('04360436043604360436');
    expect(parts.map((p) => decodeUcs2(p.payload)).join('')).toBe(plan.text);
  });

  test('a plan for 8-bit references refuses a 16-bit UDH that leaves no room (SMS_PART_TOO_LONG)', () => {
    expect(() => encodeParts(planMessage('a'.repeat(200)), { reference: 1, referenceBits: 16 })).toThrow(
      expect.objectContaining({ code: 'SMS_PART_TOO_LONG' }),
    );
    expect(encodeParts(planMessage('a'.repeat(200), { concatReferenceBits: 16 }), { reference: 1, referenceBits: 16 })).toHaveLength(2);
  });
});

describe('packUserData', () => {
  test('a single GSM-7 part is the packed septets with UDL in septets', () => {
    const [part] = encodeParts(planMessage('hellohello'), { reference: 0, referenceBits: 8 });
    const { userData, udl } = packUserData(part!, 'GSM-7');
    expect(hex(userData)).toBe('E8329BFD4697D9EC37');
    expect(udl).toBe(10);
  });

  test('a full GSM-7 part is 140 octets: UDH, 1 fill bit, 153 septets; UDL 160 septets', () => {
    const parts = encodeParts(planMessage('a'.repeat(200)), { reference: 7, referenceBits: 8 });
    const { userData, udl } = packUserData(parts[0]!, 'GSM-7');
    expect(udl).toBe(160);
    expect(userData).toHaveLength(140);
    expect(hex(userData.subarray(0, 6))).toBe('050003070201');
    expect(decodeGsm7Septets(unpackSeptets(userData.subarray(6), 153, 1))).toBe('a'.repeat(153));
    const last = packUserData(parts[1]!, 'GSM-7');
    expect(last.udl).toBe(7 + 47);
  });

  test('a 16-bit UDH needs no fill bits: UDL = 8 septets of UDH + the text', () => {
    const parts = encodeParts(planMessage('a'.repeat(200), { concatReferenceBits: 16 }), { reference: 7, referenceBits: 16 });
    const { userData, udl } = packUserData(parts[0]!, 'GSM-7');
    expect(udl).toBe(8 + 152);
    expect(userData).toHaveLength(140);
    expect(decodeGsm7Septets(unpackSeptets(userData.subarray(7), 152, 0))).toBe('a'.repeat(152));
  });

  test('UCS-2 user data is UDH then the octets, UDL in octets', () => {
    const parts = encodeParts(planMessage('ж'.repeat(71)), { reference: 7, referenceBits: 8 });
    const { userData, udl } = packUserData(parts[0]!, 'UCS-2');
    expect(udl).toBe(140);
    expect(userData.subarray(6)).toEqual(encodeUcs2('ж'.repeat(67)));
  });
});
