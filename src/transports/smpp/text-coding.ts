/**
 * The octets a GSM-7 part carries in short_message for each data_coding a carrier may want
 * (SMPP 3.4 §5.2.19), and UCS-2 for data_coding 0x08.
 *
 * - 0x00 SMSC default alphabet: GSM 03.38 septets, one per octet, unpacked; the SMSC packs them.
 * - 0x01 IA5 (CCITT T.50) / ASCII: smsgate sends the characters as ASCII octets. GSM-7 characters
 *   outside ASCII (é, £, Δ, €...) have no IA5 octet.
 * - 0x03 Latin-1 (ISO-8859-1): one octet per character; the GSM-7 characters outside Latin-1
 *   (Δ Φ Γ Λ Ω Π Ψ Σ Θ Ξ €) have none.
 * A part with a character the chosen coding cannot carry is a coded failure naming the
 * character (ENCODING_UNSUPPORTED), never a substituted '?'.
 */
import { encodeGsm7Septets, encodeUcs2, type Encoding } from '../../sms/index.js';
import { isGatewayError } from '../../common/errors.js';
import type { OutboundCustomerCut } from '../transport.js';
import type { Gsm7DataCoding } from './config.js';

/** SMPP 3.4 §5.2.19 data_coding values smsgate sends. */
export const DATA_CODING = {
  smscDefault: 0x00,
  ia5: 0x01,
  latin1: 0x03,
  ucs2: 0x08,
} as const;

export type TextCodingResult =
  | { ok: true; octets: Buffer; dataCoding: number }
  | { ok: false; status: 'ENCODING_UNSUPPORTED'; detail: string };

function unsupported(text: string, index: number, codingName: string): TextCodingResult {
  const codePoint = text.codePointAt(index) ?? 0;
  const name = `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
  return { ok: false, status: 'ENCODING_UNSUPPORTED', detail: `character '${String.fromCodePoint(codePoint)}' (${name}) has no ${codingName} octet` };
}

function singleOctets(text: string, maxCode: number, codingName: string, dataCoding: number): TextCodingResult {
  const octets = Buffer.allocUnsafe(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > maxCode) return unsupported(text, i, codingName);
    octets[i] = code;
  }
  return { ok: true, octets, dataCoding };
}

/** A Buffer view of the encoder's fresh array (no copy; nothing else holds it). */
function asBuffer(octets: Uint8Array): Buffer {
  return Buffer.from(octets.buffer, octets.byteOffset, octets.byteLength);
}

/** Octets of one part's text in the carrier's coding. */
export function encodePartText(text: string, encoding: Encoding, gsm7DataCoding: Gsm7DataCoding): TextCodingResult {
  if (encoding === 'UCS-2') {
    return { ok: true, octets: asBuffer(encodeUcs2(text)), dataCoding: DATA_CODING.ucs2 };
  }
  if (gsm7DataCoding === DATA_CODING.ia5) return singleOctets(text, 0x7f, 'IA5/ASCII', DATA_CODING.ia5);
  if (gsm7DataCoding === DATA_CODING.latin1) return singleOctets(text, 0xff, 'Latin-1', DATA_CODING.latin1);
  try {
    return { ok: true, octets: asBuffer(encodeGsm7Septets(text)), dataCoding: DATA_CODING.smscDefault };
  } catch (err) {
    if (isGatewayError(err, 'SMS_NOT_GSM7')) return { ok: false, status: 'ENCODING_UNSUPPORTED', detail: err.message };
    throw err;
  }
}

/**
 * Octets of a customer's part text in the customer's own data coding (OutboundCustomerCut):
 * 0 GSM 03.38 septets unpacked, as any GSM-7 text of ours goes with data_coding 0; 3 Latin-1;
 * 8 UCS-2 big-endian.
 */
export function encodeCutText(text: string, dataCoding: OutboundCustomerCut['dataCoding']): TextCodingResult {
  if (dataCoding === DATA_CODING.latin1) return singleOctets(text, 0xff, 'Latin-1', DATA_CODING.latin1);
  return encodePartText(text, dataCoding === DATA_CODING.ucs2 ? 'UCS-2' : 'GSM-7', DATA_CODING.smscDefault);
}
