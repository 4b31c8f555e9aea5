/**
 * Packing of 7-bit septets into octets, 3GPP TS 23.038 §6.1.2.1.1: septet n occupies bits
 * 7n .. 7n+6 of the stream, least significant bit first. When user data starts with a UDH,
 * TS 23.040 §9.2.3.24 inserts fill bits after it so that the first septet starts on a septet
 * boundary counted from the start of the user data; `fillBits` is that count (0..6).
 */
import { GatewayError } from '../common/errors.js';

function checkFillBits(fillBits: number): void {
  if (!Number.isInteger(fillBits) || fillBits < 0 || fillBits > 6) {
    throw new GatewayError('SMS_BAD_FILL_BITS', `fill bits must be an integer 0..6, got ${fillBits}`, {
      details: { fillBits },
    });
  }
}

/** Packs septet values (0..127, one per byte) after `fillBits` zero bits. */
export function packSeptets(septets: Uint8Array, fillBits = 0): Uint8Array {
  checkFillBits(fillBits);
  const octets = new Uint8Array(Math.ceil((fillBits + septets.length * 7) / 8));
  let bitOffset = fillBits;
  for (let i = 0; i < septets.length; i++) {
    const septet = septets[i] as number;
    if (septet > 0x7f) {
      throw new GatewayError('SMS_BAD_SEPTET', `septet ${i} has value ${septet}, above 127`, { details: { index: i, value: septet } });
    }
    const octetIndex = bitOffset >>> 3;
    const shift = bitOffset & 7;
    octets[octetIndex] = (octets[octetIndex] as number) | ((septet << shift) & 0xff);
    if (shift > 1) octets[octetIndex + 1] = septet >>> (8 - shift);
    bitOffset += 7;
  }
  return octets;
}

/** Unpacks `septetCount` septets that start after `fillBits` bits; too few octets is a coded failure. */
export function unpackSeptets(octets: Uint8Array, septetCount: number, fillBits = 0): Uint8Array {
  checkFillBits(fillBits);
  const octetsNeeded = Math.ceil((fillBits + septetCount * 7) / 8);
  if (!Number.isInteger(septetCount) || septetCount < 0 || octets.length < octetsNeeded) {
    throw new GatewayError(
      'SMS_SHORT_USER_DATA',
      `${septetCount} septets after ${fillBits} fill bits need ${octetsNeeded} octets, got ${octets.length}`,
      { details: { septetCount, fillBits, octets: octets.length } },
    );
  }
  const septets = new Uint8Array(septetCount);
  let bitOffset = fillBits;
  for (let i = 0; i < septetCount; i++) {
    const octetIndex = bitOffset >>> 3;
    const shift = bitOffset & 7;
    let value = (octets[octetIndex] as number) >>> shift;
    if (shift > 1) value |= (octets[octetIndex + 1] as number) << (8 - shift);
    septets[i] = value & 0x7f;
    bitOffset += 7;
  }
  return septets;
}
