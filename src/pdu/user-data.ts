/**
 * TS 23.040 §9.2.3.16 TP-UDL and §9.2.3.24 TP-UD decoding: an optional user data header (when
 * TP-UDHI is set), then the text. With GSM-7 the UDL counts septets and the text starts on the
 * septet boundary after the header (fill bits); with 8-bit data and UCS-2 it counts octets.
 */
import { GatewayError } from '../common/errors.js';
import { type Gsm7Shift, IEI, NATIONAL_LANGUAGE_ID, type NationalLanguage, decodeGsm7Septets, decodeUcs2, unpackSeptets } from '../sms/index.js';
import type { Alphabet } from './dcs.js';
import { octetsToHex } from './octets.js';

/** The element identifiers read here are the ones smsgate writes (src/sms/udh.ts): one definition. */
export { IEI };

const LANGUAGE_BY_ID = new Map<number, NationalLanguage>(
  (Object.entries(NATIONAL_LANGUAGE_ID) as [NationalLanguage, number][]).map(([language, id]) => [id, language]),
);

function nationalLanguage(id: number, iei: number): NationalLanguage {
  const language = LANGUAGE_BY_ID.get(id);
  if (language === undefined) {
    throw new GatewayError('PDU_UNKNOWN_NATIONAL_LANGUAGE', `shift element 0x${iei.toString(16)} names national language ${id}, which smsgate has no table for`, {
      details: { iei, languageId: id },
    });
  }
  return language;
}

export interface InformationElement {
  iei: number;
  /** The element's data as hex. */
  data: string;
}

export interface ConcatInfo {
  reference: number;
  referenceBits: 8 | 16;
  total: number;
  sequence: number;
}

export interface DecodedUserData {
  udh: InformationElement[];
  concat: ConcatInfo | null;
  /** The text; for 8-bit data, empty (the octets are in dataHex). */
  text: string;
  /** The user data after the header, as hex. */
  dataHex: string;
  /**
   * The national language tables the header's shift elements name (TS 23.040 §9.2.3.24.15-16),
   * present only when it has one: a reader that decodes the septets itself (an SMPP customer's
   * unpacked data_coding 0) needs them to read the text as the sender wrote it.
   */
  shift?: Gsm7Shift;
}

function bad(message: string, details: Record<string, unknown>): GatewayError {
  return new GatewayError('PDU_BAD_USER_DATA', message, { details });
}

interface ParsedHeader {
  elements: InformationElement[];
  concat: ConcatInfo | null;
  shift: Gsm7Shift;
}

function parseHeader(udh: Uint8Array): ParsedHeader {
  const elements: InformationElement[] = [];
  let concat: ConcatInfo | null = null;
  const shift: Gsm7Shift = {};
  let offset = 0;
  while (offset < udh.length) {
    if (offset + 2 > udh.length) throw bad('user data header ends inside an element', { offset });
    const iei = udh[offset] as number;
    const length = udh[offset + 1] as number;
    const data = udh.subarray(offset + 2, offset + 2 + length);
    if (data.length !== length) throw bad(`element 0x${iei.toString(16)} runs past the header`, { iei, length });
    elements.push({ iei, data: octetsToHex(data) });
    if (iei === IEI.concat8 && length === 3) {
      concat = { reference: data[0] as number, referenceBits: 8, total: data[1] as number, sequence: data[2] as number };
    } else if (iei === IEI.concat16 && length === 4) {
      concat = { reference: ((data[0] as number) << 8) | (data[1] as number), referenceBits: 16, total: data[2] as number, sequence: data[3] as number };
    } else if (iei === IEI.nationalSingleShift && length === 1) {
      shift.single = nationalLanguage(data[0] as number, iei);
    } else if (iei === IEI.nationalLockingShift && length === 1) {
      shift.locking = nationalLanguage(data[0] as number, iei);
    }
    offset += 2 + length;
  }
  return { elements, concat, shift };
}

/**
 * @param userData the octets after TP-UDL, which must be exactly what the UDL says: a longer or
 *   shorter field is a coded failure (PDU_BAD_USER_DATA), not a silently cut text.
 */
/** TS 23.040 §9.2.3.16: octets of TP-UD for a TP-UDL (septets for GSM-7, octets otherwise). */
export function userDataOctets(udl: number, alphabet: Alphabet): number {
  return alphabet === 'GSM-7' ? Math.ceil((udl * 7) / 8) : udl;
}

export function decodeUserData(userData: Uint8Array, udl: number, alphabet: Alphabet, hasHeader: boolean): DecodedUserData {
  const expectedOctets = userDataOctets(udl, alphabet);
  if (userData.length !== expectedOctets) {
    throw bad(`TP-UDL ${udl} (${alphabet}) needs ${expectedOctets} octets of user data, PDU has ${userData.length}`, {
      udl, alphabet, octets: userData.length,
    });
  }
  let headerOctets = 0;
  let header: ParsedHeader = { elements: [], concat: null, shift: {} };
  if (hasHeader) {
    const udhl = userData[0];
    if (udhl === undefined || 1 + udhl > userData.length) throw bad('user data header is longer than the user data', { udhl });
    headerOctets = 1 + udhl;
    header = parseHeader(userData.subarray(1, headerOctets));
  }
  const body = userData.subarray(headerOctets);
  let text = '';
  if (alphabet === 'GSM-7') {
    const headerSeptets = Math.ceil((headerOctets * 8) / 7);
    const fillBits = headerSeptets * 7 - headerOctets * 8;
    const septetCount = udl - headerSeptets;
    if (septetCount < 0) throw bad('TP-UDL is shorter than the user data header', { udl, headerSeptets });
    text = decodeGsm7Septets(unpackSeptets(body, septetCount, fillBits), header.shift);
  } else if (alphabet === 'UCS-2') {
    text = decodeUcs2(body);
  }
  const hasShift = header.shift.single !== undefined || header.shift.locking !== undefined;
  return { udh: header.elements, concat: header.concat, text, dataHex: octetsToHex(body), ...(hasShift ? { shift: header.shift } : {}) };
}
