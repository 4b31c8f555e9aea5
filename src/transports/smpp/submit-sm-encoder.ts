/**
 * submit_sm bytes (SMPP 3.4 §4.4.1) built once when a part is planned, instead of by the smpp
 * package on every send. The package builds each PDU by walking all its fields with for-in loops
 * and filters, about a fifth of the CPU a part cost; the bytes here are the same, octet for
 * octet (a test compares them with the package's PDU.toBuffer). The package's Session still
 * sends them, numbers them and does everything else.
 */
import type { OutgoingPdu } from 'smpp';
import type { SubmitSmFields } from './submit-sm-fields.js';

/** SMPP 3.4 §5.1.2. */
export const SUBMIT_SM_COMMAND_ID = 0x00000004;

/** SMPP 3.4 §3.2: command_length, command_id, command_status, sequence_number. */
const HEADER_OCTETS = 16;
const SEQUENCE_NUMBER_OFFSET = 12;

/** SMPP 3.4 §5.3.2 tags of the TLVs smsgate sends, with their value sizes in octets (0 = the value's length). */
const TLVS = [
  { field: 'sar_msg_ref_num', tag: 0x020c, octets: 2 },
  { field: 'sar_total_segments', tag: 0x020e, octets: 1 },
  { field: 'sar_segment_seqnum', tag: 0x020f, octets: 1 },
  { field: 'message_payload', tag: 0x0424, octets: 0 },
] as const;

/** SMPP 3.4 §5.2.21: sm_length is one octet. */
const SHORT_MESSAGE_MAX_OCTETS = 255;

function cstringOctets(value: string): number {
  return value.length + 1;
}

function writeCstring(buffer: Buffer, offset: number, value: string): number {
  // C-Octet String (SMPP 3.4 §3.1): one octet per character (the package writes 'ascii', which
  // Node encodes as Latin-1), then NULL.
  const written = buffer.write(value, offset, 'latin1');
  buffer[offset + written] = 0;
  return offset + written + 1;
}

/** The whole submit_sm PDU with sequence_number 0; Session.send numbers it (EncodedPdu). */
export function encodeSubmitSm(fields: SubmitSmFields): Buffer {
  const shortMessage = fields.short_message;
  if (shortMessage.length > SHORT_MESSAGE_MAX_OCTETS) {
    throw new RangeError(`short_message is ${shortMessage.length} octets; sm_length holds at most ${SHORT_MESSAGE_MAX_OCTETS}`);
  }
  let length =
    HEADER_OCTETS +
    cstringOctets(fields.service_type) + 2 + cstringOctets(fields.source_addr) +
    2 + cstringOctets(fields.destination_addr) +
    3 + cstringOctets('') + cstringOctets(fields.validity_period) +
    4 + 1 + shortMessage.length;
  for (const tlv of TLVS) {
    const value = fields[tlv.field];
    if (value !== undefined) length += 4 + (tlv.octets === 0 ? (value as Buffer).length : tlv.octets);
  }
  const pdu = Buffer.alloc(length);
  pdu.writeUInt32BE(length, 0);
  pdu.writeUInt32BE(SUBMIT_SM_COMMAND_ID, 4);
  let at = HEADER_OCTETS;
  at = writeCstring(pdu, at, fields.service_type);
  at = pdu.writeUInt8(fields.source_addr_ton, at);
  at = pdu.writeUInt8(fields.source_addr_npi, at);
  at = writeCstring(pdu, at, fields.source_addr);
  at = pdu.writeUInt8(fields.dest_addr_ton, at);
  at = pdu.writeUInt8(fields.dest_addr_npi, at);
  at = writeCstring(pdu, at, fields.destination_addr);
  at = pdu.writeUInt8(fields.esm_class, at);
  at = pdu.writeUInt8(fields.protocol_id, at);
  at = pdu.writeUInt8(fields.priority_flag, at);
  at = writeCstring(pdu, at, ''); // schedule_delivery_time: immediate
  at = writeCstring(pdu, at, fields.validity_period);
  at = pdu.writeUInt8(fields.registered_delivery, at);
  at = pdu.writeUInt8(0, at); // replace_if_present_flag
  at = pdu.writeUInt8(fields.data_coding, at);
  at = pdu.writeUInt8(0, at); // sm_default_msg_id
  at = pdu.writeUInt8(shortMessage.length, at);
  at += shortMessage.copy(pdu, at);
  for (const tlv of TLVS) {
    const value = fields[tlv.field];
    if (value === undefined) continue;
    at = pdu.writeUInt16BE(tlv.tag, at);
    if (typeof value === 'number') {
      at = pdu.writeUInt16BE(tlv.octets, at);
      at = tlv.octets === 2 ? pdu.writeUInt16BE(value, at) : pdu.writeUInt8(value, at);
    } else {
      at = pdu.writeUInt16BE(value.length, at);
      at += value.copy(pdu, at);
    }
  }
  return pdu;
}

/**
 * A request PDU already encoded, in the shape the package's Session.send uses: it sets
 * sequence_number, then calls toBuffer(). Each send gets its own copy of the bytes, so the same
 * planned part could be sent again without touching bytes still queued on a socket.
 */
export class EncodedPdu implements OutgoingPdu {
  sequence_number = 0;

  constructor(
    readonly command: string,
    private readonly bytes: Buffer,
  ) {}

  isResponse(): boolean {
    return false;
  }

  toBuffer(): Buffer {
    const out = Buffer.allocUnsafe(this.bytes.length);
    this.bytes.copy(out, 0);
    out.writeUInt32BE(this.sequence_number, SEQUENCE_NUMBER_OFFSET);
    return out;
  }
}

/** SMPP 3.4 §5.1.2: deliver_sm_resp and data_sm_resp. */
export const DELIVER_SM_RESP_COMMAND_ID = 0x80000005;
export const DATA_SM_RESP_COMMAND_ID = 0x80000103;

/**
 * deliver_sm_resp / data_sm_resp (SMPP 3.4 §4.6.2, §4.7.2) with an empty message_id (one NULL
 * octet: the field is unused; none after an error status), written directly: one per receipt, and the package's encoder (a
 * PDU object, its field walk and filters) cost more than the 17 octets. The same bytes as the
 * package's request.response({ message_id: '' }) (a test compares them).
 */
export class EncodedResponse implements OutgoingPdu {
  constructor(
    readonly command: 'deliver_sm_resp' | 'data_sm_resp',
    readonly sequence_number: number,
    private readonly commandStatus: number,
  ) {}

  isResponse(): boolean {
    return true;
  }

  toBuffer(): Buffer {
    // An error response carries the header alone, as the package (and SMPP 3.4 §3.3's generic
    // rule for a response with a non-zero command_status) writes it.
    const length = this.commandStatus === 0 ? HEADER_OCTETS + 1 : HEADER_OCTETS;
    const out = Buffer.allocUnsafe(length);
    out.writeUInt32BE(length, 0);
    out.writeUInt32BE(this.command === 'deliver_sm_resp' ? DELIVER_SM_RESP_COMMAND_ID : DATA_SM_RESP_COMMAND_ID, 4);
    out.writeUInt32BE(this.commandStatus >>> 0, 8);
    out.writeUInt32BE(this.sequence_number >>> 0, SEQUENCE_NUMBER_OFFSET);
    if (length > HEADER_OCTETS) out[HEADER_OCTETS] = 0;
    return out;
  }
}
