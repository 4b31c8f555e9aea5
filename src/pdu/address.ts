/**
 * TS 23.040 §9.1.2.5 address fields (TP-OA, TP-DA, TP-RA) and TS 24.011 §8.2.5.1/2 RP-SC
 * addresses: a length, a type-of-address octet (bit 7 set, TON in bits 6-4, NPI in bits 3-0) and
 * the digits as swapped semi-octets with an F filler when the count is odd (TS 23.040 §9.1.2.3).
 */
import { GatewayError } from '../common/errors.js';
import { decodeGsm7Septets, unpackSeptets } from '../sms/index.js';
import type { OctetReader } from './octets.js';

/** TS 23.040 §9.1.2.5: type of number (bits 6-4 of the type-of-address octet). */
export const TYPE_OF_NUMBER = {
  unknown: 0,
  international: 1,
  national: 2,
  networkSpecific: 3,
  subscriber: 4,
  alphanumeric: 5,
  abbreviated: 6,
} as const;

/** TS 23.040 §9.1.2.5: numbering plan ISDN/telephone (E.164/E.163). */
export const NPI_ISDN = 1;

/** The number types an SMS-SUBMIT destination may take, and the type-of-address octet of each. */
export const DESTINATION_TYPE_OF_ADDRESS = {
  international: 0x80 | (TYPE_OF_NUMBER.international << 4) | NPI_ISDN, // 0x91
  national: 0x80 | (TYPE_OF_NUMBER.national << 4) | NPI_ISDN, // 0xA1
  unknown: 0x80 | (TYPE_OF_NUMBER.unknown << 4) | NPI_ISDN, // 0x81
} as const;

export type DestinationNumberType = keyof typeof DESTINATION_TYPE_OF_ADDRESS;

export interface DecodedAddress {
  /** Digits as dialled, with '+' in front of an international number; the text of an alphanumeric one. */
  value: string;
  /** Digits only (no '+'), or the text of an alphanumeric address. */
  digits: string;
  typeOfNumber: number;
  numberingPlan: number;
}

/** TS 23.040 §9.1.2.3: semi-octet digits 0-9 plus the TS 24.008 Table 10.5.118 extra symbols. */
const SEMI_OCTET_DIGITS = '0123456789*#abc';

export function encodeSemiOctets(digits: string): Uint8Array {
  const octets = new Uint8Array(Math.ceil(digits.length / 2));
  for (let i = 0; i < digits.length; i += 2) {
    const low = semiOctetValue(digits[i] as string);
    const high = i + 1 < digits.length ? semiOctetValue(digits[i + 1] as string) : 0x0f;
    octets[i / 2] = (high << 4) | low;
  }
  return octets;
}

function semiOctetValue(ch: string): number {
  const value = SEMI_OCTET_DIGITS.indexOf(ch);
  if (value === -1) throw new GatewayError('PDU_BAD_ADDRESS', `'${ch}' cannot be sent as a semi-octet digit`, { details: { character: ch } });
  return value;
}

/** Decodes `digitCount` semi-octet digits; an F nibble only ends an odd count. */
export function decodeSemiOctets(octets: Uint8Array, digitCount: number): string {
  let digits = '';
  for (let i = 0; i < digitCount; i++) {
    const octet = octets[i >> 1] as number;
    const nibble = i % 2 === 0 ? octet & 0x0f : octet >> 4;
    const ch = SEMI_OCTET_DIGITS[nibble];
    if (ch === undefined) throw new GatewayError('PDU_BAD_ADDRESS', `semi-octet ${i} is 0x${nibble.toString(16)}, not a digit`, { details: { index: i } });
    digits += ch;
  }
  return digits;
}

/** TP-DA of an SMS-SUBMIT: digits only, no '+'. */
export function encodeDestinationAddress(digits: string, numberType: DestinationNumberType): Uint8Array {
  if (!/^[0-9]{1,20}$/.test(digits)) {
    throw new GatewayError('PDU_BAD_ADDRESS', 'destination must be 1 to 20 digits', { details: { digitCount: digits.length } });
  }
  const semiOctets = encodeSemiOctets(digits);
  return Uint8Array.from([digits.length, DESTINATION_TYPE_OF_ADDRESS[numberType], ...semiOctets]);
}

function describe(typeOfAddress: number, digits: string): DecodedAddress {
  const typeOfNumber = (typeOfAddress >> 4) & 0x07;
  const numberingPlan = typeOfAddress & 0x0f;
  const value = typeOfNumber === TYPE_OF_NUMBER.international && digits.length > 0 ? `+${digits}` : digits;
  return { value, digits, typeOfNumber, numberingPlan };
}

/** TP-OA / TP-DA / TP-RA: the length octet counts useful semi-octets (TS 23.040 §9.1.2.5). */
export function readTpAddress(reader: OctetReader, field: string): DecodedAddress {
  const semiOctetCount = reader.octet(`${field} length`);
  const typeOfAddress = reader.octet(`${field} type`);
  const body = reader.take(Math.ceil(semiOctetCount / 2), field);
  if (((typeOfAddress >> 4) & 0x07) === TYPE_OF_NUMBER.alphanumeric) {
    // TS 23.040 §9.1.2.5: alphanumeric addresses are GSM 7-bit packed, semi-octet count * 4 bits.
    const septetCount = Math.floor((semiOctetCount * 4) / 7);
    const text = decodeGsm7Septets(unpackSeptets(body, septetCount));
    return { value: text, digits: text, typeOfNumber: TYPE_OF_NUMBER.alphanumeric, numberingPlan: typeOfAddress & 0x0f };
  }
  return describe(typeOfAddress, decodeSemiOctets(body, semiOctetCount));
}

/** RP-SC address before the TPDU (TS 27.005 §3.1 <pdu>): its length octet counts octets incl. the type. */
export function readSmscAddress(reader: OctetReader): DecodedAddress | null {
  const octetCount = reader.octet('SMSC length');
  if (octetCount === 0) return null;
  const typeOfAddress = reader.octet('SMSC type');
  const body = reader.take(octetCount - 1, 'SMSC address');
  const lastHigh = body.length === 0 ? 0 : (body[body.length - 1] as number) >> 4;
  const digitCount = body.length * 2 - (lastHigh === 0x0f ? 1 : 0);
  return describe(typeOfAddress, decodeSemiOctets(body, digitCount));
}
