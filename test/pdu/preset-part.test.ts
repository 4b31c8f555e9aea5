/**
 * One SMS-SUBMIT for a part whose concatenation header was chosen before it (a customer's own cut),
 * TS 23.040 §9.2.2.2 with the UDH of §9.2.3.24.1 / §9.2.3.24.8.
 */
import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/common/errors.js';
import { decodePdu, encodePresetSubmitPart, type DecodedSubmit } from '../../src/pdu/index.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isGatewayError(err) ? err.code : 'NOT_A_GATEWAY_ERROR';
  }
  return undefined;
}

describe('SMS-SUBMIT with a preset concatenation header', () => {
  // The published "hellohello" SMS-SUBMIT (dreamfabric.com, Lars Pettersson) with a 16-bit reference
  // UDH in front: first octet 0x51 (TP-UDHI), TP-UDL 0x12 (7 UDH octets = 8 septets, no fill bits, + 10),
  // then 06 08 04 12 34 02 01 and the same packed septets as the published example.
  it('encodes a 16-bit reference UDH before GSM-7 text byte for byte', () => {
    const part = encodePresetSubmitPart(
      { destination: '46708251358', encoding: 'GSM-7', text: 'hellohello', concat: { reference: 0x1234, referenceBits: 16, total: 2, sequence: 1 } },
      { validityMinutes: 4 * 24 * 60 },
    );
    expect(part.hex).toBe('0051000B916407281553F80000AA12' + '06080412340201' + 'E8329BFD4697D9EC37');
    expect([part.sequence, part.total, part.tpduOctets]).toEqual([1, 2, (part.hex.length - 2) / 2]);
  });

  it('an 8-bit reference UDH with UCS-2 text decodes back to the same header and text', () => {
    const part = encodePresetSubmitPart({ destination: '353871234567', encoding: 'UCS-2', text: 'Côte', concat: { reference: 0xfe, referenceBits: 8, total: 3, sequence: 3 } });
    const decoded = decodePdu(part.hex, { smsc: 'present' }) as DecodedSubmit;
    expect(decoded.dcs).toBe(0x08);
    expect(decoded.udl).toBe(6 + 8);
    expect(decoded.userData.udh).toEqual([{ iei: 0x00, data: 'FE0303' }]);
    expect(decoded.userData.concat).toEqual({ reference: 0xfe, referenceBits: 8, total: 3, sequence: 3 });
    expect(decoded.userData.text).toBe('Côte');
  });

  it('refuses text that does not fit beside the header, or a header out of range', () => {
    const concat = { reference: 1, referenceBits: 16 as const, total: 2, sequence: 1 };
    expect(codeOf(() => encodePresetSubmitPart({ destination: '353871234567', encoding: 'GSM-7', text: 'a'.repeat(152), concat }))).toBeUndefined();
    expect(codeOf(() => encodePresetSubmitPart({ destination: '353871234567', encoding: 'GSM-7', text: 'a'.repeat(153), concat }))).toBe('SMS_PART_TOO_LONG');
    expect(codeOf(() => encodePresetSubmitPart({ destination: '353871234567', encoding: 'UCS-2', text: 'ж'.repeat(67), concat }))).toBe('SMS_PART_TOO_LONG');
    expect(codeOf(() => encodePresetSubmitPart({ destination: '353871234567', encoding: 'GSM-7', text: 'Ж', concat }))).toBe('SMS_NOT_GSM7');
    expect(codeOf(() => encodePresetSubmitPart({ destination: '353871234567', encoding: 'GSM-7', text: 'a', concat: { ...concat, sequence: 3 } }))).toBe('SMS_BAD_CONCAT');
  });
});
