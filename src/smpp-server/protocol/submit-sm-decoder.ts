/**
 * A customer's submit_sm (SMPP 3.4 §4.4.1) read from its frame, octet strings kept as sent.
 *
 * The `smpp` package's decoding (pdu-decoder.ts) is right for the rest of the server's PDUs but
 * not for this one: it turns schedule_delivery_time and validity_period into Dates (a relative
 * time becomes "now plus", so the customer's string is lost) and decodes short_message and
 * message_payload into text by data_coding (lossy for a national shift table, and the UDH comes
 * back without its length octet). The server must carry the message upstream as the customer cut
 * it, so the mandatory fields and the TLVs it uses are read here straight from the frame the
 * frame reader cut (frame-reader.ts); the header's length was already checked there.
 *
 * Pure: octets in, a union out.
 */
import { SERVER_STATUS, type ServerStatus, type SubmitSmFields } from '../contracts.js';
import { COMMAND_STATUS_CODE } from '../../transports/smpp/command-status.js';
import { SMPP_HEADER_BYTES } from '../../transports/smpp/frame-reader.js';

/** SMPP 3.4 §5.3.2 tags of the TLVs the server reads from a submit_sm. */
export const SUBMIT_SM_TLV = {
  sar_msg_ref_num: 0x020c,
  sar_total_segments: 0x020e,
  sar_segment_seqnum: 0x020f,
  message_payload: 0x0424,
} as const;

/** SMPP 3.4 §3.2.1: each TLV is tag (2 octets), length (2 octets), value. */
const TLV_HEADER_OCTETS = 4;

export type SubmitSmDecoding =
  | { kind: 'submit_sm'; sequenceNumber: number; fields: SubmitSmFields }
  /** The frame is readable but an optional parameter is wrong: submit_sm_resp with this status. */
  | { kind: 'refused'; sequenceNumber: number; status: ServerStatus; reason: string }
  /** A field runs past command_length: generic_nack ESME_RINVCMDLEN (SMPP 3.4 §4.3), link kept. */
  | { kind: 'undecodable'; sequenceNumber: number; nackStatus: number; reason: string };

class Truncated extends Error {}

/** Reads one field after another, failing (Truncated) where a field would run past the frame. */
class FieldReader {
  constructor(
    private readonly frame: Buffer,
    public offset: number,
  ) {}

  get remaining(): number {
    return this.frame.length - this.offset;
  }

  octet(name: string): number {
    if (this.remaining < 1) throw new Truncated(`${name} runs past command_length`);
    return this.frame[this.offset++]!;
  }

  /** SMPP 3.4 §3.1: a C-Octet String ends with NULL; its octets read as Latin-1 (one character each). */
  cstring(name: string): string {
    const end = this.frame.indexOf(0, this.offset);
    if (end === -1) throw new Truncated(`${name} has no NULL terminator before command_length`);
    const value = this.frame.toString('latin1', this.offset, end);
    this.offset = end + 1;
    return value;
  }

  octets(name: string, length: number): Buffer {
    if (this.remaining < length) throw new Truncated(`${name} (${length} octets) runs past command_length`);
    const value = Buffer.from(this.frame.subarray(this.offset, this.offset + length));
    this.offset += length;
    return value;
  }
}

/** Decodes a whole submit_sm frame (header included, command_length octets long). */
export function decodeSubmitSm(frame: Buffer): SubmitSmDecoding {
  const sequenceNumber = frame.readUInt32BE(12);
  const reader = new FieldReader(frame, SMPP_HEADER_BYTES);
  try {
    const serviceType = reader.cstring('service_type');
    const sourceAddrTon = reader.octet('source_addr_ton');
    const sourceAddrNpi = reader.octet('source_addr_npi');
    const sourceAddr = reader.cstring('source_addr');
    const destAddrTon = reader.octet('dest_addr_ton');
    const destAddrNpi = reader.octet('dest_addr_npi');
    const destinationAddr = reader.cstring('destination_addr');
    const esmClass = reader.octet('esm_class');
    const protocolId = reader.octet('protocol_id');
    const priorityFlag = reader.octet('priority_flag');
    const scheduleDeliveryTime = reader.cstring('schedule_delivery_time');
    const validityPeriod = reader.cstring('validity_period');
    const registeredDelivery = reader.octet('registered_delivery');
    reader.octet('replace_if_present_flag');
    const dataCoding = reader.octet('data_coding');
    reader.octet('sm_default_msg_id');
    const smLength = reader.octet('sm_length');
    const shortMessage = reader.octets('short_message', smLength);
    const fields: SubmitSmFields = {
      serviceType, sourceAddrTon, sourceAddrNpi, sourceAddr, destAddrTon, destAddrNpi, destinationAddr,
      esmClass, protocolId, priorityFlag, scheduleDeliveryTime, validityPeriod, registeredDelivery, dataCoding, shortMessage,
    };
    const tlvs = readTlvs(reader);
    const payload = tlvs.get(SUBMIT_SM_TLV.message_payload);
    if (payload !== undefined) fields.messagePayload = payload;
    const sar = readSar(tlvs);
    if (sar.kind === 'invalid') return { kind: 'refused', sequenceNumber, status: SERVER_STATUS.invalidParameter, reason: sar.reason };
    if (sar.kind === 'present') fields.sar = sar.sar;
    return { kind: 'submit_sm', sequenceNumber, fields };
  } catch (err) {
    if (!(err instanceof Truncated)) throw err;
    return { kind: 'undecodable', sequenceNumber, nackStatus: COMMAND_STATUS_CODE.ESME_RINVCMDLEN, reason: err.message };
  }
}

/** The optional part: every TLV by tag (the last one wins when a tag repeats); unknown tags are skipped, as §3.2.1 allows. */
function readTlvs(reader: FieldReader): Map<number, Buffer> {
  const tlvs = new Map<number, Buffer>();
  while (reader.remaining > 0) {
    if (reader.remaining < TLV_HEADER_OCTETS) throw new Truncated(`${reader.remaining} octets after the last parameter are no TLV`);
    const tag = (reader.octet('tag') << 8) | reader.octet('tag');
    const length = (reader.octet('length') << 8) | reader.octet('length');
    tlvs.set(tag, reader.octets(`TLV 0x${tag.toString(16).padStart(4, '0')}`, length));
  }
  return tlvs;
}

type SarReading =
  | { kind: 'absent' }
  | { kind: 'present'; sar: NonNullable<SubmitSmFields['sar']> }
  | { kind: 'invalid'; reason: string };

/**
 * SMPP 3.4 §5.3.2.22-24: the three SAR TLVs go together (sar_msg_ref_num 2 octets, the others 1);
 * one without the others, a value of the wrong size, or a sequence outside 1..total cannot say
 * where the part belongs: ESME_RINVOPTPARSTREAM ("error in the optional part of the PDU body").
 */
function readSar(tlvs: ReadonlyMap<number, Buffer>): SarReading {
  const reference = tlvs.get(SUBMIT_SM_TLV.sar_msg_ref_num);
  const total = tlvs.get(SUBMIT_SM_TLV.sar_total_segments);
  const sequence = tlvs.get(SUBMIT_SM_TLV.sar_segment_seqnum);
  if (reference === undefined && total === undefined && sequence === undefined) return { kind: 'absent' };
  if (reference === undefined || total === undefined || sequence === undefined) {
    return { kind: 'invalid', reason: 'sar_msg_ref_num, sar_total_segments and sar_segment_seqnum must come together' };
  }
  if (reference.length !== 2 || total.length !== 1 || sequence.length !== 1) return { kind: 'invalid', reason: 'a SAR TLV has the wrong length' };
  const sar = { reference: reference.readUInt16BE(0), total: total[0]!, sequence: sequence[0]! };
  if (sar.total < 1 || sar.sequence < 1 || sar.sequence > sar.total) {
    return { kind: 'invalid', reason: `sar_segment_seqnum ${sar.sequence} of sar_total_segments ${sar.total}` };
  }
  return { kind: 'present', sar };
}
