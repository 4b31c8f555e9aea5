/**
 * A part an SMPP customer cut itself (OutboundCustomerCut), as the engine plans it and the
 * transports send it: one pure set of rules, so the engine's guard and each transport's own check
 * can never disagree about what fits.
 *
 * - The part carries the customer's concatenation header: an 8-bit reference UDH takes 6 octets of
 *   the 140 (05 00 03 ref total seq), a 16-bit one 7 (06 08 04 refHi refLo total seq); SAR TLVs
 *   none of the short_message, but the SMSC builds such a UDH from them (SMPP 3.4 §5.3.2.22-24),
 *   so a SAR part is held to the one its reference needs.
 * - The SMPP server's intake, the engine's plan and the SMPP transport's guard all ask
 *   cutPartRefusal with cutHeaderOctets(concat): one answer to "does it fit one SMS". The modem
 *   asks again in its own air coding (a SAR part goes as a 16-bit reference UDH there).
 * - What fits is counted in the data coding the part goes out in (3GPP TS 23.040 §9.2.3.16,
 *   §9.2.3.24): GSM-7 septets after the UDH and its fill bits, Latin-1 octets, UCS-2 code units.
 * - A transport that speaks only the TS 23.038 alphabets (a modem's TP-DCS) sends a Latin-1
 *   (data_coding 3) part as GSM-7 when every character is in the GSM 7 bit default alphabet, else
 *   as UCS-2 (airEncoding).
 */
import { isGatewayError } from '../common/errors.js';
import { encodeGsm7Septets, gsm7SeptetCapacity, ucs2UnitCapacity, USER_DATA_MAX_OCTETS, type Encoding } from '../sms/index.js';
import type { ConcatHeader, OutboundCustomerCut } from './transport.js';

/**
 * Why a cut part cannot go, as the part's status: the stored cut is not one smsgate can read, a
 * character has no code in the part's coding, or the text does not fit one part beside its header.
 */
export type CutRefusalStatus = 'CUSTOMER_CUT_INVALID' | 'CUSTOMER_PART_UNENCODABLE' | 'CUSTOMER_PART_TOO_LONG';

export interface CutRefusal {
  status: CutRefusalStatus;
  detail: string;
}

/**
 * Octets of the 140 the concatenation header takes in the part on the air (TS 23.040
 * §9.2.3.24.1/.8: UDHL included): 6 for an 8-bit reference UDH, 7 for a 16-bit one. SAR TLVs
 * (SMPP 3.4 §5.3.2.22-24) take none of the short_message, but the SMSC turns them into such a
 * UDH, so a SAR part counts the one its reference needs (8-bit up to 255, else 16-bit; 16-bit
 * when the reference is not given).
 */
export function cutHeaderOctets(header: ConcatHeader['scheme'] | Pick<ConcatHeader, 'scheme' | 'reference'> | null): number {
  if (header === null) return 0;
  const { scheme, reference } = typeof header === 'string' ? { scheme: header, reference: undefined } : header;
  if (scheme === 'udh8') return 6;
  if (scheme === 'udh16') return 7;
  return reference !== undefined && reference <= 0xff ? 6 : 7;
}

/** Septets a text takes in the GSM 7 bit default alphabet (an extension character counts 2), or null if it has a character outside it. */
export function gsm7Septets(text: string): number | null {
  try {
    return encodeGsm7Septets(text).length;
  } catch (err) {
    if (isGatewayError(err, 'SMS_NOT_GSM7')) return null;
    throw err;
  }
}

/** The first character of the text above `maxCode` (Latin-1: 0xff), as an index; -1 when none. */
function firstAbove(text: string, maxCode: number): number {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > maxCode) return i;
  return -1;
}

/** The first UTF-16 unit of the text outside the GSM 7 bit default alphabet, as an index (0 when none). */
function firstNotGsm7(text: string): number {
  for (let i = 0; i < text.length; i++) if (gsm7Septets(text.charAt(i)) === null) return i;
  return 0;
}

function unencodable(text: string, index: number, coding: string): CutRefusal {
  const codePoint = text.codePointAt(index) ?? 0;
  const name = `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
  return { status: 'CUSTOMER_PART_UNENCODABLE', detail: `character '${String.fromCodePoint(codePoint)}' (${name}) has no ${coding} code` };
}

function tooLong(units: number, unit: string, capacity: number, headerOctets: number): CutRefusal {
  return { status: 'CUSTOMER_PART_TOO_LONG', detail: `${units} ${unit}, one part holds ${capacity} beside a ${headerOctets}-octet header` };
}

/**
 * Whether the text goes in one part in this SMPP data coding (0 GSM 7 bit default alphabet,
 * 3 Latin-1, 8 UCS-2) beside a header of `headerOctets`: null when it does, else why not.
 */
export function cutPartRefusal(text: string, dataCoding: OutboundCustomerCut['dataCoding'], headerOctets: number): CutRefusal | null {
  if (dataCoding === 0) {
    const septets = gsm7Septets(text);
    if (septets === null) return unencodable(text, firstNotGsm7(text), 'GSM 7 bit');
    const capacity = gsm7SeptetCapacity(headerOctets);
    return septets > capacity ? tooLong(septets, 'septets', capacity, headerOctets) : null;
  }
  if (dataCoding === 3) {
    const at = firstAbove(text, 0xff);
    if (at >= 0) return unencodable(text, at, 'Latin-1');
    const capacity = USER_DATA_MAX_OCTETS - headerOctets;
    return text.length > capacity ? tooLong(text.length, 'Latin-1 octets', capacity, headerOctets) : null;
  }
  const capacity = ucs2UnitCapacity(headerOctets);
  return text.length > capacity ? tooLong(text.length, 'UCS-2 units', capacity, headerOctets) : null;
}

/**
 * The TS 23.038 alphabet a cut part goes out in where only GSM-7 and UCS-2 exist (the modem's
 * TP-DCS, the engine's plan): the customer's for 0 and 8; for Latin-1 (3) GSM-7 when every
 * character is in the GSM 7 bit default alphabet, else UCS-2.
 */
export function airEncoding(dataCoding: OutboundCustomerCut['dataCoding'], text: string): Encoding {
  if (dataCoding === 0) return 'GSM-7';
  if (dataCoding === 8) return 'UCS-2';
  return gsm7Septets(text) === null ? 'UCS-2' : 'GSM-7';
}

/** The SMPP data coding that carries an air encoding's text as TS 23.038 defines it (GSM-7: 0, UCS-2: 8). */
export function dataCodingOf(encoding: Encoding): OutboundCustomerCut['dataCoding'] {
  return encoding === 'UCS-2' ? 8 : 0;
}
