/**
 * From a message plan to the octets each part carries: the UDH (concatenation IE, then any
 * national shift IEs) and the payload, unpacked septets for SMPP (data_coding 0 lets the SMSC
 * pack) or UCS-2 big-endian; and, for modem PDUs, the packed TP-User-Data with its TP-UDL.
 */
import { GatewayError } from '../common/errors.js';
import { encodeGsm7Septets } from './gsm7.js';
import type { Encoding } from './message-layout.js';
import type { MessagePlan } from './message-plan.js';
import { packSeptets } from './septet-packing.js';
import { buildUdh, concatIe, fillBitsAfterUdh, nationalShiftIes } from './udh.js';
import { encodeUcs2 } from './ucs2.js';
import { gsm7SeptetCapacity, ucs2UnitCapacity, USER_DATA_MAX_OCTETS } from './user-data-capacity.js';

export interface EncodedPart {
  /** 1-based part number. */
  sequence: number;
  total: number;
  /** Complete UDH including UDHL; null for a single part without national shift IEs. */
  udh: Uint8Array | null;
  /** Unpacked septets (GSM-7, one per octet, ESC pairs included) or UCS-2 big-endian octets. */
  payload: Uint8Array;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2) of this part. */
  units: number;
}

export interface ConcatSettings {
  /** 0..255 for an 8-bit reference, 0..65535 for a 16-bit one; the same for every part and retry. */
  reference: number;
  referenceBits: 8 | 16;
}

/** TS 23.040 §9.2.3.24.1: the total-parts octet counts at most 255 parts. */
export const MAX_CONCAT_PARTS = 255;

function partTooLong(sequence: number, units: number, capacity: number): GatewayError {
  return new GatewayError('SMS_PART_TOO_LONG', `part ${sequence} has ${units} units but its UDH leaves room for ${capacity}`, {
    details: { sequence, units, capacity },
  });
}

/**
 * Encodes every segment of the plan. Throws SMS_PART_TOO_LONG when a segment does not fit beside
 * its UDH (a plan made for 8-bit references sent with 16-bit ones: plan with concatReferenceBits 16),
 * SMS_TOO_MANY_PARTS above 255 parts, SMS_BAD_CONCAT for a reference out of range.
 */
export function encodeParts(plan: MessagePlan, concat: ConcatSettings): EncodedPart[] {
  const total = plan.segments.length;
  if (total > MAX_CONCAT_PARTS) {
    throw new GatewayError('SMS_TOO_MANY_PARTS', `the text needs ${total} parts, at most ${MAX_CONCAT_PARTS} can be concatenated`, {
      details: { parts: total },
    });
  }
  const shift = { single: plan.singleShift, locking: plan.lockingShift };
  const shiftIes = nationalShiftIes(shift);
  return plan.segments.map((segment, index) => {
    const sequence = index + 1;
    const ies = total > 1 ? [concatIe(concat.reference, total, sequence, concat.referenceBits), ...shiftIes] : shiftIes;
    const udh = ies.length > 0 ? buildUdh(ies) : null;
    const udhOctets = udh?.length ?? 0;
    if (plan.encoding === 'GSM-7') {
      const payload = encodeGsm7Septets(segment, shift);
      const capacity = gsm7SeptetCapacity(udhOctets);
      if (payload.length > capacity) throw partTooLong(sequence, payload.length, capacity);
      return { sequence, total, udh, payload, units: payload.length };
    }
    const capacity = ucs2UnitCapacity(udhOctets);
    if (segment.length > capacity) throw partTooLong(sequence, segment.length, capacity);
    return { sequence, total, udh, payload: encodeUcs2(segment), units: segment.length };
  });
}

/**
 * TP-User-Data and TP-UDL for a modem PDU (TS 23.040 §9.2.3.16, §9.2.3.24): GSM-7 is the UDH,
 * then fill bits, then packed septets, with UDL in septets counting the UDH and fill; UCS-2 is
 * the UDH then the payload, with UDL in octets.
 */
export function packUserData(part: EncodedPart, encoding: Encoding): { userData: Uint8Array; udl: number } {
  const udh = part.udh ?? new Uint8Array(0);
  let body: Uint8Array;
  let udl: number;
  if (encoding === 'GSM-7') {
    const fillBits = udh.length === 0 ? 0 : fillBitsAfterUdh(udh.length);
    body = packSeptets(part.payload, fillBits);
    udl = (udh.length * 8 + fillBits) / 7 + part.payload.length;
  } else {
    body = part.payload;
    udl = udh.length + part.payload.length;
  }
  const userData = new Uint8Array(udh.length + body.length);
  userData.set(udh, 0);
  userData.set(body, udh.length);
  if (userData.length > USER_DATA_MAX_OCTETS) {
    throw new GatewayError('SMS_PART_TOO_LONG', `part ${part.sequence} needs ${userData.length} octets of user data, at most ${USER_DATA_MAX_OCTETS} fit`, {
      details: { sequence: part.sequence, octets: userData.length },
    });
  }
  return { userData, udl };
}
