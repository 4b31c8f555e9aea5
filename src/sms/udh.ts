/**
 * User Data Header construction, 3GPP TS 23.040 §9.2.3.24: concatenation with an 8-bit (IEI 0x00)
 * or 16-bit (IEI 0x08) reference, and the national language shift IEs (0x24 single, 0x25 locking).
 */
import { GatewayError } from '../common/errors.js';
import { NATIONAL_LANGUAGE_ID, type NationalLanguage } from './national-languages.js';

/**
 * The concatenation reference of a recipient's message (the same for every part and retry):
 * derived from the recipient id, so it survives restarts without a stored counter, and two
 * messages to one handset get different references unless 65,536 recipients apart.
 */
export function concatReferenceFor(recipientId: number): number {
  return recipientId & 0xffff;
}

/**
 * TS 23.040 §9.2.3.24: the information element identifiers smsgate writes and reads (src/pdu):
 * concatenation (8-bit reference §9.2.3.24.1, 16-bit §9.2.3.24.8) and national language single /
 * locking shift (§9.2.3.24.15, §9.2.3.24.16).
 */
export const IEI = {
  concat8: 0x00,
  concat16: 0x08,
  nationalSingleShift: 0x24,
  nationalLockingShift: 0x25,
} as const;

/** Concatenation IE without the UDHL octet: IEI, IEDL, reference, total, sequence. */
export function concatIe(reference: number, total: number, sequence: number, referenceBits: 8 | 16): Uint8Array {
  const maxReference = referenceBits === 8 ? 0xff : 0xffff;
  if (!Number.isInteger(reference) || reference < 0 || reference > maxReference) {
    throw new GatewayError('SMS_BAD_CONCAT', `a ${referenceBits}-bit concatenation reference must be 0..${maxReference}, got ${reference}`, {
      details: { reference, referenceBits },
    });
  }
  // TS 23.040 §9.2.3.24.1: total 1..255 parts, sequence 1..total (0 and >total are to be ignored by the receiver).
  if (!Number.isInteger(total) || total < 1 || total > 255 || !Number.isInteger(sequence) || sequence < 1 || sequence > total) {
    throw new GatewayError('SMS_BAD_CONCAT', `part ${sequence} of ${total} is not a valid concatenation (total 1..255, sequence 1..total)`, {
      details: { total, sequence },
    });
  }
  return referenceBits === 8
    ? Uint8Array.of(IEI.concat8, 3, reference, total, sequence)
    : Uint8Array.of(IEI.concat16, 4, reference >>> 8, reference & 0xff, total, sequence);
}

/** Complete concatenation UDH including UDHL: 05 00 03 ref total seq, or 06 08 04 refHi refLo total seq. */
export function concatUdh(reference: number, total: number, sequence: number, referenceBits: 8 | 16): Uint8Array {
  return buildUdh([concatIe(reference, total, sequence, referenceBits)]);
}

/** National language shift IEs (TS 23.040 §9.2.3.24.15/16): 24 01 id for single, 25 01 id for locking. */
export function nationalShiftIes(shift: { single?: NationalLanguage; locking?: NationalLanguage }): Uint8Array[] {
  const ies: Uint8Array[] = [];
  if (shift.single !== undefined) ies.push(Uint8Array.of(IEI.nationalSingleShift, 1, NATIONAL_LANGUAGE_ID[shift.single]));
  if (shift.locking !== undefined) ies.push(Uint8Array.of(IEI.nationalLockingShift, 1, NATIONAL_LANGUAGE_ID[shift.locking]));
  return ies;
}

/** UDHL followed by the IEs, in order. */
export function buildUdh(ies: readonly Uint8Array[]): Uint8Array {
  const ieOctets = ies.reduce((sum, ie) => sum + ie.length, 0);
  const udh = new Uint8Array(ieOctets + 1);
  udh[0] = ieOctets;
  let offset = 1;
  for (const ie of ies) {
    udh.set(ie, offset);
    offset += ie.length;
  }
  return udh;
}

/** TS 23.040 §9.2.3.24: fill bits after a UDH of `udhOctets` octets (UDHL included) so septets start aligned. */
export function fillBitsAfterUdh(udhOctets: number): number {
  return (7 - ((udhOctets * 8) % 7)) % 7;
}
