/**
 * Splits an SMPP byte stream into whole PDUs by their command_length (SMPP 3.4 §3.2), and
 * decodes a submit_sm body field by field, keeping short_message and TLVs as raw octets for
 * wire-level assertions (the smpp package decodes them into text and loses the bytes).
 */
import type { SubmitSmMandatoryFields } from '../../../src/transports/smpp/submit-pdu.js';

/** SMPP 3.4 §3.2: the header is command_length, command_id, command_status, sequence_number. */
export const PDU_HEADER_OCTETS = 16;

export class PduFramer {
  private buffered: Buffer = Buffer.alloc(0);

  /** Adds bytes; returns every PDU now complete, in order. */
  push(chunk: Buffer): Buffer[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const frames: Buffer[] = [];
    while (this.buffered.length >= 4) {
      const commandLength = this.buffered.readUInt32BE(0);
      if (commandLength < PDU_HEADER_OCTETS) throw new RangeError(`command_length ${commandLength} is shorter than the header`);
      if (this.buffered.length < commandLength) break;
      frames.push(Buffer.from(this.buffered.subarray(0, commandLength)));
      this.buffered = this.buffered.subarray(commandLength);
    }
    return frames;
  }

  get pendingOctets(): number {
    return this.buffered.length;
  }
}

export interface PduHeader {
  commandLength: number;
  commandId: number;
  commandStatus: number;
  sequenceNumber: number;
}

export function readHeader(pdu: Buffer): PduHeader {
  return {
    commandLength: pdu.readUInt32BE(0),
    commandId: pdu.readUInt32BE(4),
    commandStatus: pdu.readUInt32BE(8),
    sequenceNumber: pdu.readUInt32BE(12),
  };
}

/**
 * A submit_sm as read off the wire: the fields smsgate's encoder takes (SubmitSmMandatoryFields,
 * so the two cannot drift apart), the three it always sends fixed, and every TLV raw.
 */
export interface RawSubmitSm extends SubmitSmMandatoryFields {
  schedule_delivery_time: string;
  replace_if_present_flag: number;
  sm_default_msg_id: number;
  /** TLVs by tag, in wire order. */
  tlvs: Map<number, Buffer>;
}

/** SMPP 3.4 §4.4.1 submit_sm body, read from a whole PDU. */
export function decodeSubmitSm(pdu: Buffer): RawSubmitSm {
  let offset = PDU_HEADER_OCTETS;
  const cstring = (): string => {
    const end = pdu.indexOf(0, offset);
    if (end < 0) throw new RangeError(`unterminated C-Octet String at ${offset}`);
    const value = pdu.toString('latin1', offset, end);
    offset = end + 1;
    return value;
  };
  const int8 = (): number => pdu.readUInt8(offset++);
  const service_type = cstring();
  const source_addr_ton = int8();
  const source_addr_npi = int8();
  const source_addr = cstring();
  const dest_addr_ton = int8();
  const dest_addr_npi = int8();
  const destination_addr = cstring();
  const esm_class = int8();
  const protocol_id = int8();
  const priority_flag = int8();
  const schedule_delivery_time = cstring();
  const validity_period = cstring();
  const registered_delivery = int8();
  const replace_if_present_flag = int8();
  const data_coding = int8();
  const sm_default_msg_id = int8();
  const smLength = int8();
  const short_message = Buffer.from(pdu.subarray(offset, offset + smLength));
  offset += smLength;
  const tlvs = new Map<number, Buffer>();
  while (offset + 4 <= pdu.length) {
    const tag = pdu.readUInt16BE(offset);
    const length = pdu.readUInt16BE(offset + 2);
    tlvs.set(tag, Buffer.from(pdu.subarray(offset + 4, offset + 4 + length)));
    offset += 4 + length;
  }
  return {
    service_type, source_addr_ton, source_addr_npi, source_addr, dest_addr_ton, dest_addr_npi, destination_addr,
    esm_class, protocol_id, priority_flag, schedule_delivery_time, validity_period, registered_delivery,
    replace_if_present_flag, data_coding, sm_default_msg_id, short_message, tlvs,
  };
}

/** SMPP 3.4 §5.3.2 TLV tags the tests look at. */
export const TLV_TAG = {
  receipted_message_id: 0x001e,
  sar_msg_ref_num: 0x020c,
  sar_total_segments: 0x020e,
  sar_segment_seqnum: 0x020f,
  message_payload: 0x0424,
  message_state: 0x0427,
} as const;
