/**
 * The user data of a mobile-originated deliver_sm / data_sm (SMPP 3.4 §4.6.1, §4.7.1) as octets,
 * and what it says about concatenation: UDH IE 0x00 / 0x08 (TS 23.040 §9.2.3.24.1, .8) when
 * esm_class has UDHI (§5.2.12, 0x40), else the SAR TLVs sar_msg_ref_num / sar_total_segments /
 * sar_segment_seqnum (§5.3.2.22-24). The text is in short_message, or in message_payload when
 * short_message is empty (§5.3.2.32).
 *
 * The smpp package (0.5.1) decodes short_message and message_payload inside the PDU constructor
 * and keeps no copy of the octets; its decoding is lossy for national shift tables and cannot
 * keep UCS-2 octets of a surrogate pair split between parts apart from their text. So this module
 * keeps the raw octets: once, at import, it wraps PDU.prototype._filter so that just before the
 * package's own 'decode' pass the two raw Buffers are saved on the PDU under a non-enumerable
 * symbol (invisible to the package, which walks enumerable keys). Nothing else changes.
 */
import smpp from 'smpp';
import type { PDU } from 'smpp';
import { decodeUserData, IEI, type InformationElement } from '../../pdu/index.js';
import { decodeGsm7Septets, decodeUcs2, type Gsm7Shift, isNationalLanguage, NATIONAL_LANGUAGE_ID, type NationalLanguage } from '../../sms/index.js';
import type { ConcatHeader, InboundMessage } from '../transport.js';
import { ESM_UDHI, isReceiptType } from './esm-class.js';

const RAW_USER_DATA = Symbol('smsgate.rawUserData');

interface RawUserData {
  short_message?: Buffer;
  message_payload?: Buffer;
}

type FilterablePdu = { _filter(func: string): void; [RAW_USER_DATA]?: RawUserData; [field: string]: unknown };

const proto = (smpp as unknown as { PDU: { prototype: FilterablePdu } }).PDU.prototype;
const originalFilter = proto._filter;
if (!(originalFilter as { smsgateRaw?: boolean }).smsgateRaw) {
  const wrapped = function (this: FilterablePdu, func: string): void {
    if (func === 'decode') {
      const raw: RawUserData = {};
      // The package replaces these fields with decoded objects and never writes into the Buffers: no copy needed.
      if (Buffer.isBuffer(this['short_message'])) raw.short_message = this['short_message'];
      if (Buffer.isBuffer(this['message_payload'])) raw.message_payload = this['message_payload'];
      Object.defineProperty(this, RAW_USER_DATA, { value: raw, enumerable: false });
      if (isAsciiReceipt(this)) {
        // A receipt's text is read from the raw octets (deliver-sm.ts deliverSmText): the package's
        // GSM decoding of it (a coder lookup per call, the largest part of its decode cost) is
        // skipped by handing its filter the decoded shape already (it leaves non-Buffers alone).
        if (raw.short_message !== undefined) this['short_message'] = { message: raw.short_message.toString('latin1') };
        if (raw.message_payload !== undefined) this['message_payload'] = { message: raw.message_payload.toString('latin1') };
      }
    }
    originalFilter.call(this, func);
  };
  (wrapped as { smsgateRaw?: boolean }).smsgateRaw = true;
  proto._filter = wrapped;
}

/**
 * A deliver_sm / data_sm typed as a receipt by esm_class, in the SMSC default alphabet or IA5
 * (data_coding 0 or 1, SMPP 3.4 Appendix B: receipts are ASCII).
 */
function isAsciiReceipt(pdu: FilterablePdu): boolean {
  if (pdu['command'] !== 'deliver_sm' && pdu['command'] !== 'data_sm') return false;
  const esmClass = pdu['esm_class'];
  const dataCoding = pdu['data_coding'];
  if (typeof esmClass !== 'number' || !isReceiptType(esmClass) || typeof dataCoding !== 'number') return false;
  const alphabet = dataCoding & 0x0f;
  return alphabet === 0x00 || alphabet === 0x01;
}

/** The short_message and message_payload octets as received, before the package decoded them (absent when not sent). */
export function rawUserData(pdu: PDU): Readonly<RawUserData> {
  return (pdu as unknown as FilterablePdu)[RAW_USER_DATA] ?? {};
}

export type MoCoding = 'gsm7' | 'ucs2' | 'binary' | 'other';

/**
 * SMPP 3.4 §5.2.19 data_coding to how the octets are read: 0 is the SMSC default alphabet (GSM
 * 03.38, one septet per octet), 8 UCS-2, 2 and 4 8-bit data; the TS 23.038 message-class group
 * 0xF0-0xFF says GSM-7 or 8-bit in bit 2. Others (IA5, Latin-1, ...) are read as text as before.
 */
export function moCoding(dataCoding: number): MoCoding {
  if ((dataCoding & 0xf0) === 0xf0) return (dataCoding & 0x04) !== 0 ? 'binary' : 'gsm7';
  if (dataCoding === 0x00) return 'gsm7';
  if (dataCoding === 0x08) return 'ucs2';
  if (dataCoding === 0x02 || dataCoding === 0x04) return 'binary';
  return 'other';
}

function numberField(pdu: PDU, name: string): number | undefined {
  const value = pdu[name];
  return typeof value === 'number' ? value : undefined;
}

const LANGUAGE_BY_ID = new Map<number, NationalLanguage>(
  (Object.entries(NATIONAL_LANGUAGE_ID) as [string, number][]).filter(([name]) => isNationalLanguage(name)).map(([name, id]) => [id, name as NationalLanguage]),
);

function shiftOf(elements: readonly InformationElement[]): Gsm7Shift {
  const shift: Gsm7Shift = {};
  for (const element of elements) {
    const language = LANGUAGE_BY_ID.get(Number.parseInt(element.data, 16));
    if (language === undefined) continue;
    if (element.iei === IEI.nationalSingleShift) shift.single = language;
    if (element.iei === IEI.nationalLockingShift) shift.locking = language;
  }
  return shift;
}

function sarConcat(pdu: PDU): ConcatHeader | undefined {
  const reference = numberField(pdu, 'sar_msg_ref_num');
  const total = numberField(pdu, 'sar_total_segments');
  const sequence = numberField(pdu, 'sar_segment_seqnum');
  if (reference === undefined || total === undefined || sequence === undefined) return undefined;
  return { scheme: 'sar', reference, total, sequence };
}

/**
 * What reading an MO's user data had to do that the PDU did not ask for; the caller logs it, so
 * no text is changed or dropped without a line saying so (STYLE 7).
 *  - `udh-unreadable`: esm_class says UDHI, but the header's length (UDHL) points past the end of
 *    the user data, or an IE inside it runs past the header (TS 23.040 §9.2.3.24). The octets are
 *    read as text without a header (the first octet included), never as an empty text.
 *  - `gsm7-top-bit-masked`: data_coding 0 carries one septet per octet (SMPP 3.4 §5.2.19), so an
 *    octet above 0x7F is not a septet. Its top bit is masked (octet & 0x7F) and the septet is read
 *    with the GSM-7 table, as SMSC clients that receive 8-bit-clean links do.
 */
export type MoReadingNote =
  | { kind: 'udh-unreadable'; reason: string; octets: number }
  | { kind: 'gsm7-top-bit-masked'; octets: number };

/**
 * The message or part a non-receipt deliver_sm carries. `fallbackText` is the text as the package
 * decoded it, used for codings read as plain text. `onNote` hears every MoReadingNote.
 */
export function inboundFromDeliverSm(pdu: PDU, fallbackText: string, receivedAt: string, onNote: (note: MoReadingNote) => void = () => undefined): InboundMessage {
  const from = typeof pdu['source_addr'] === 'string' ? pdu['source_addr'] : '';
  const to = typeof pdu['destination_addr'] === 'string' ? pdu['destination_addr'] : '';
  const raw = (pdu as unknown as FilterablePdu)[RAW_USER_DATA] ?? {};
  const shortMessage = raw.short_message;
  const octets = shortMessage !== undefined && shortMessage.length > 0 ? shortMessage : raw.message_payload;
  const coding = moCoding(numberField(pdu, 'data_coding') ?? 0);
  const sar = sarConcat(pdu);
  const base: InboundMessage = { from, to, text: fallbackText, receivedAt, raw: fallbackText, ...(sar === undefined ? {} : { concat: sar }) };
  if (octets === undefined) return base;
  const hasHeader = ((numberField(pdu, 'esm_class') ?? 0) & ESM_UDHI) !== 0;
  // Read as 8-bit: SMPP carries GSM-7 unpacked, one septet per octet, so the body is its septets.
  const userData = readUserData(octets, hasHeader, onNote);
  const concat: ConcatHeader | undefined = userData.concat === null
    ? sar
    : { scheme: userData.concat.referenceBits === 16 ? 'udh16' : 'udh8', reference: userData.concat.reference, total: userData.concat.total, sequence: userData.concat.sequence };
  const rawHex = octets.toString('hex').toUpperCase();
  const message: InboundMessage = { from, to, text: fallbackText, receivedAt, raw: rawHex, ...(concat === undefined ? {} : { concat }) };
  const body = Buffer.from(userData.dataHex, 'hex');
  if (coding === 'gsm7') return { ...message, text: decodeGsm7Septets(maskTopBits(body, onNote), shiftOf(userData.udh)) };
  // `text` is this PDU alone as read (for logs and single-part use); the joined octets in `content` are what count.
  if (coding === 'ucs2') return { ...message, text: decodeOctetsAsUcs2(body, fallbackText, userData.headerRead), content: { coding, octetsHex: userData.dataHex } };
  if (coding === 'binary') return { ...message, text: userData.dataHex.toUpperCase(), content: { coding, octetsHex: userData.dataHex } };
  return userData.headerRead ? message : { ...message, text: body.toString('latin1') };
}

/** The user data, or (its header unreadable) the whole octets as a body without a header. */
function readUserData(octets: Buffer, hasHeader: boolean, onNote: (note: MoReadingNote) => void): ReturnType<typeof decodeUserData> & { headerRead: boolean } {
  try {
    return { ...decodeUserData(octets, octets.length, '8-bit', hasHeader), headerRead: true };
  } catch (err) {
    onNote({ kind: 'udh-unreadable', reason: err instanceof Error ? err.message : String(err), octets: octets.length });
    return { ...decodeUserData(octets, octets.length, '8-bit', false), headerRead: false };
  }
}

/** The package's UCS-2 text when it read the same header we did; else our own reading of the body. */
function decodeOctetsAsUcs2(body: Buffer, fallbackText: string, headerRead: boolean): string {
  if (headerRead) return fallbackText;
  const even = body.length - (body.length % 2);
  return decodeUcs2(body.subarray(0, even)) + (even === body.length ? '' : '\uFFFD');
}

function maskTopBits(body: Buffer, onNote: (note: MoReadingNote) => void): Uint8Array {
  let masked = 0;
  for (const octet of body) if (octet > 0x7f) masked++;
  if (masked === 0) return body;
  onNote({ kind: 'gsm7-top-bit-masked', octets: masked });
  return body.map((octet) => octet & 0x7f);
}
