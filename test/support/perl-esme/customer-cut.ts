/**
 * The submit_sm a customer's ESME sends for one message, cut the way customers cut long messages:
 * one short_message, several parts with an 8-bit or 16-bit reference concatenation UDH (3GPP TS
 * 23.040 §9.2.3.24.1 and .8, esm_class UDHI 0x40), several parts with the SAR TLVs (SMPP 3.4
 * §5.3.2.22-24), or the whole text in message_payload (§5.3.2.32); data_coding 0 (SMSC default
 * alphabet), 3 (Latin-1) or 8 (UCS-2). The octets are what the test then expects the upstream
 * SMSC to receive: the server carries each part as the customer cut it.
 */

/** What esme.pl sends for one submit_sm (octet strings as hex). */
export interface EsmeSubmit {
  /** The test's name for it, echoed in its submit_sm_resp line (numbered when absent). */
  ref?: string;
  source_addr: string;
  source_addr_ton?: number;
  source_addr_npi?: number;
  destination_addr: string;
  dest_addr_ton?: number;
  dest_addr_npi?: number;
  esm_class?: number;
  data_coding?: number;
  registered_delivery?: number;
  short_message?: string;
  sar?: [number, number, number];
  message_payload?: string;
}

export type CutScheme = 'single' | 'udh8' | 'udh16' | 'sar' | 'payload';
export type CustomerDataCoding = 0 | 3 | 8;

/** One message in every way a customer sends one (a single part, UDH 8/16-bit, SAR, message_payload) and every data_coding the server takes. */
export const CUT_CASES: readonly { scheme: CutScheme; dataCoding: CustomerDataCoding; text: string }[] = [
  { scheme: 'single', dataCoding: 0, text: 'Hello from Perl' },
  { scheme: 'udh8', dataCoding: 0, text: 'Part one of three. '.repeat(8) },
  { scheme: 'udh16', dataCoding: 3, text: 'Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e '.repeat(6) },
  { scheme: 'sar', dataCoding: 8, text: '\u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440 '.repeat(10) },
  { scheme: 'payload', dataCoding: 0, text: 'A whole text in message payload' },
];

export interface CutRequest {
  text: string;
  scheme: CutScheme;
  dataCoding: CustomerDataCoding;
  source: string;
  destination: string;
  /** Concatenation reference (8-bit: 0-255, 16-bit and SAR: 0-65535). */
  reference?: number;
  /** Characters a part (default: 60, a size every scheme and coding fits in one SMS). */
  charsPerPart?: number;
  /** SMPP 3.4 §5.2.17 (default 1: a receipt for the final outcome). */
  registeredDelivery?: number;
}

/** SMPP 3.4 §5.2.12: UDH indicator. */
export const ESM_CLASS_UDHI = 0x40;
/** Source TON 5 (alphanumeric) for a named sender, 1 (international) for a number. */
const tonOf = (source: string): number => (/^\d+$/.test(source) ? 1 : 5);

/** The text's octets in a data coding: 0 as ASCII (the GSM default alphabet agrees on letters, digits and space), 3 Latin-1, 8 UCS-2 big-endian. */
export function encodeText(text: string, dataCoding: CustomerDataCoding): Buffer {
  if (dataCoding === 8) return Buffer.from(text, 'utf16le').swap16();
  if (dataCoding === 0 && !/^[A-Za-z0-9 .,]*$/.test(text)) {
    throw new RangeError('data_coding 0 texts here are letters, digits, space, full stop and comma: the octets GSM 03.38 and ASCII agree on');
  }
  return Buffer.from(text, 'latin1');
}

/** The UDH that heads each part (an information element of concatenated short messages). */
export function concatUdh(scheme: 'udh8' | 'udh16', reference: number, total: number, sequence: number): Buffer {
  return scheme === 'udh8'
    ? Buffer.from([0x05, 0x00, 0x03, reference & 0xff, total, sequence])
    : Buffer.from([0x06, 0x08, 0x04, (reference >> 8) & 0xff, reference & 0xff, total, sequence]);
}

/** The submit_sm for one message as the customer cut it, in order. */
export function cutMessage(request: CutRequest): EsmeSubmit[] {
  const base = {
    source_addr: request.source,
    source_addr_ton: tonOf(request.source),
    source_addr_npi: 0,
    destination_addr: request.destination,
    dest_addr_ton: 1,
    dest_addr_npi: 1,
    data_coding: request.dataCoding,
    registered_delivery: request.registeredDelivery ?? 1,
  };
  if (request.scheme === 'single') return [{ ...base, esm_class: 0, short_message: encodeText(request.text, request.dataCoding).toString('hex') }];
  if (request.scheme === 'payload') return [{ ...base, esm_class: 0, short_message: '', message_payload: encodeText(request.text, request.dataCoding).toString('hex') }];
  const size = request.charsPerPart ?? 60;
  const chunks: string[] = [];
  for (let at = 0; at < request.text.length; at += size) chunks.push(request.text.slice(at, at + size));
  const total = chunks.length;
  const reference = request.reference ?? 42;
  const scheme = request.scheme;
  return chunks.map((chunk, i) => {
    const body = encodeText(chunk, request.dataCoding);
    if (scheme === 'sar') return { ...base, esm_class: 0, short_message: body.toString('hex'), sar: [reference, total, i + 1] };
    return { ...base, esm_class: ESM_CLASS_UDHI, short_message: Buffer.concat([concatUdh(scheme, reference, total, i + 1), body]).toString('hex') };
  });
}
