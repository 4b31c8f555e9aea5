/**
 * TS 23.038 §4 TP-Data-Coding-Scheme: which alphabet the user data uses and its message class.
 */
import { GatewayError } from '../common/errors.js';

export type Alphabet = 'GSM-7' | '8-bit' | 'UCS-2';

export interface DataCodingScheme {
  alphabet: Alphabet;
  compressed: boolean;
  /** 0 flash, 1 ME-specific, 2 SIM-specific, 3 TE-specific; null when the DCS carries no class. */
  messageClass: number | null;
}

/** TS 23.038 §4: the two values smsgate sends: general coding, no class, default alphabet or UCS-2. */
export const DCS = { gsm7: 0x00, ucs2: 0x08 } as const;

const ALPHABET_BITS: Readonly<Record<number, Alphabet | undefined>> = { 0: 'GSM-7', 1: '8-bit', 2: 'UCS-2' };

export function parseDcs(dcs: number): DataCodingScheme {
  const group = dcs >> 4;
  // 00xx and 01xx: general data coding (01xx = automatic deletion), bits 3-2 alphabet, bit 4 class present.
  if (group <= 0x07) {
    const alphabet = ALPHABET_BITS[(dcs >> 2) & 0x03];
    if (alphabet === undefined) throw new GatewayError('PDU_BAD_DCS', `DCS 0x${dcs.toString(16)} uses the reserved alphabet`, { details: { dcs } });
    return { alphabet, compressed: (dcs & 0x20) !== 0, messageClass: dcs & 0x10 ? dcs & 0x03 : null };
  }
  // 1100 / 1101 message waiting indication (discard / store), GSM-7; 1110 store, UCS-2.
  if (group === 0x0c || group === 0x0d) return { alphabet: 'GSM-7', compressed: false, messageClass: null };
  if (group === 0x0e) return { alphabet: 'UCS-2', compressed: false, messageClass: null };
  // 1111: data coding / message class; bit 2 = 8-bit data, else GSM-7.
  if (group === 0x0f) return { alphabet: dcs & 0x04 ? '8-bit' : 'GSM-7', compressed: false, messageClass: dcs & 0x03 };
  throw new GatewayError('PDU_BAD_DCS', `DCS 0x${dcs.toString(16)} is in a reserved coding group`, { details: { dcs } });
}
