/**
 * A customer's submit_sm as text and its cut (src/smpp-server/contracts.ts CustomerCut), or the
 * command_status refusing it. Pure: the octets in, a union out.
 *
 * - data_coding (SMPP 3.4 §5.2.19): 0 the SMSC default alphabet, taken as GSM 03.38 with one
 *   septet per octet, unpacked (ESC 0x1B reaches the extension table); 3 Latin-1 (ISO-8859-1);
 *   8 UCS-2 big-endian. Any other value: 0xC0, ESME_RINVOPTPARSTREAM in the SMPP 3.4 table
 *   (SERVER_STATUS.invalidParameter; SMPP 3.4 has no status of its own for a data coding).
 * - esm_class 0x40 (UDHI, SMPP 3.4 §5.2.12): the user data starts with a UDH (3GPP TS 23.040
 *   §9.2.3.24), read by the PDU decoder: IE 0x00 (8-bit reference) or 0x08 (16-bit reference) is
 *   the concatenation; a national language shift (IE 0x24/0x25) names the tables data_coding 0
 *   is read with; any other IE is kept out of the text.
 * - SAR TLVs (SMPP 3.4 §5.3.2.22-24) are a concatenation too (scheme 'sar').
 * - message_payload (TLV 0x0424) carries the user data instead of short_message (SMPP 3.4
 *   §5.3.2.32: not both). Without a concatenation it is a whole long message: cut.concat null,
 *   and the engine splits it as it splits a campaign's text.
 * - A cut part (a concatenation set) must fit one SMS as the engine will send it (cutPartRefusal:
 *   140 octets of TP-User-Data with its UDH, TS 23.040 §9.2.3.16, i.e. 153 septets or 134 octets
 *   after an 8-bit reference UDH; every character in its coding): ESME_RINVMSGLEN when too long,
 *   ESME_RINVPARAM when a character has no code there (a national shift character).
 */
import { GatewayError } from '../../common/errors.js';
import { decodeUserData, type DecodedUserData } from '../../pdu/index.js';
import { decodeGsm7Septets, decodeUcs2, IEI, type Gsm7Shift } from '../../sms/index.js';
import { cutHeaderOctets, cutPartRefusal } from '../../transports/customer-cut.js';
import { ESM_UDHI } from '../../transports/smpp/esm-class.js';
import { SERVER_STATUS, type ConcatHeader, type CustomerCut, type CustomerDataCoding, type ServerStatus, type SubmitSmFields } from '../contracts.js';

/** SMPP 3.4 §5.2.19 data_coding values the server takes. */
export const DATA_CODING = { smscDefault: 0, latin1: 3, ucs2: 8 } as const satisfies Record<string, CustomerDataCoding>;

export type DecodedSubmit =
  | { kind: 'decoded'; text: string; cut: CustomerCut }
  | { kind: 'refused'; status: ServerStatus };

function refused(status: ServerStatus): DecodedSubmit {
  return { kind: 'refused', status };
}

function customerCoding(dataCoding: number): CustomerDataCoding | undefined {
  return dataCoding === 0 || dataCoding === 3 || dataCoding === 8 ? dataCoding : undefined;
}

type UdhParse =
  | { kind: 'parsed'; udhOctets: number; concat: ConcatHeader | null; shift: Gsm7Shift }
  | { kind: 'malformed' };

/**
 * The UDH as the PDU decoder reads it (decodeUserData, TS 23.040 §9.2.3.24): its concatenation
 * and its national language shift tables (so a text sent with them is read with them). A header
 * the decoder cannot read, a concatenation element of the wrong length, or one whose total is 0
 * or whose sequence is 0 or past the total is malformed (§9.2.3.24.1: a receiver would ignore
 * it, so the parts could never be joined): refused rather than sent.
 */
function parseUdh(userData: Uint8Array): UdhParse {
  let decoded: DecodedUserData;
  try {
    // Read as 8-bit data: only the header is wanted here, the text is decoded in the customer's coding.
    decoded = decodeUserData(userData, userData.length, '8-bit', true);
  } catch (err) {
    if (err instanceof GatewayError) return { kind: 'malformed' };
    throw err;
  }
  const { concat } = decoded;
  const hasConcatElement = decoded.udh.some((element) => element.iei === IEI.concat8 || element.iei === IEI.concat16);
  if (hasConcatElement && concat === null) return { kind: 'malformed' };
  if (concat !== null && !validConcat(concat.total, concat.sequence)) return { kind: 'malformed' };
  const header: ConcatHeader | null = concat === null
    ? null
    : { scheme: concat.referenceBits === 16 ? 'udh16' : 'udh8', reference: concat.reference, total: concat.total, sequence: concat.sequence };
  return { kind: 'parsed', udhOctets: userData.length - decoded.dataHex.length / 2, concat: header, shift: decoded.shift ?? {} };
}

function validConcat(total: number, sequence: number): boolean {
  return total >= 1 && total <= 255 && sequence >= 1 && sequence <= total;
}

function decodeText(dataCoding: CustomerDataCoding, body: Uint8Array, shift: Gsm7Shift): { kind: 'text'; text: string } | { kind: 'refused'; status: ServerStatus } {
  switch (dataCoding) {
    case DATA_CODING.smscDefault:
      // Unpacked septets: an octet above 0x7F is not GSM 03.38 (decodeGsm7Septets would throw).
      if (body.some((octet) => octet > 0x7f)) return { kind: 'refused', status: SERVER_STATUS.invalidParameter };
      return { kind: 'text', text: decodeGsm7Septets(body, shift) };
    case DATA_CODING.latin1:
      return { kind: 'text', text: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1') };
    case DATA_CODING.ucs2:
      if (body.length % 2 !== 0) return { kind: 'refused', status: SERVER_STATUS.invalidMessageLength };
      return { kind: 'text', text: decodeUcs2(body) };
  }
}

export function decodeSubmit(fields: SubmitSmFields): DecodedSubmit {
  const dataCoding = customerCoding(fields.dataCoding);
  if (dataCoding === undefined) return refused(SERVER_STATUS.invalidParameter);
  const payload = fields.messagePayload;
  const hasPayload = payload !== undefined && payload.length > 0;
  // SMPP 3.4 §5.3.2.32: short_message and message_payload are exclusive.
  if (hasPayload && fields.shortMessage.length > 0) return refused(SERVER_STATUS.invalidMessageLength);
  const userData: Uint8Array = hasPayload ? payload : fields.shortMessage;
  if (userData.length === 0) return refused(SERVER_STATUS.invalidMessageLength);

  let udhOctets = 0;
  let concat: ConcatHeader | null = null;
  let shift: Gsm7Shift = {};
  if ((fields.esmClass & ESM_UDHI) !== 0) {
    const udh = parseUdh(userData);
    if (udh.kind === 'malformed') return refused(SERVER_STATUS.invalidParameter);
    udhOctets = udh.udhOctets;
    concat = udh.concat;
    shift = udh.shift;
  }
  if (concat === null && fields.sar !== undefined) {
    // The protocol decoder (readSar) already refused a SAR set whose sequence is outside 1..total.
    const { reference, total, sequence } = fields.sar;
    concat = { scheme: 'sar', reference, total, sequence };
  }
  const body = userData.subarray(udhOctets);
  if (body.length === 0) return refused(SERVER_STATUS.invalidMessageLength);
  const decoded = decodeText(dataCoding, body, shift);
  if (decoded.kind === 'refused') return decoded;
  if (concat !== null) {
    // The engine's own rule (cutPartRefusal): a part the intake takes is one the engine sends as cut.
    const refusal = cutPartRefusal(decoded.text, dataCoding, cutHeaderOctets(concat));
    if (refusal !== null) return refused(refusal.status === 'CUSTOMER_PART_TOO_LONG' ? SERVER_STATUS.invalidMessageLength : SERVER_STATUS.invalidParameter);
  }
  return {
    kind: 'decoded',
    text: decoded.text,
    cut: {
      dataCoding,
      concat,
      registeredDelivery: fields.registeredDelivery,
      sourceAddrTon: fields.sourceAddrTon,
      sourceAddrNpi: fields.sourceAddrNpi,
    },
  };
}
