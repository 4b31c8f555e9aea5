/**
 * From one OutboundMessage to the submit_sm PDUs that carry it (SMPP 3.4 §4.4.1), per the
 * carrier's concatenation method:
 * - udh8 / udh16: one submit_sm per part, short_message = UDH (TS 23.040 §9.2.3.24.1 IEI 0x00 or
 *   0x08) + text, esm_class 0x40 (SMPP 3.4 §5.2.12 UDHI);
 * - sar: one submit_sm per part, text only, with sar_msg_ref_num / sar_total_segments /
 *   sar_segment_seqnum TLVs (SMPP 3.4 §5.3.2.22-24) and the SMSC builds the UDH;
 * - payload: the whole text in one submit_sm's message_payload TLV (SMPP 3.4 §5.3.2.32), empty
 *   short_message; every requested part gets that PDU's outcome.
 * A message that needs one part is sent plain whatever the method.
 *
 * A part an SMPP customer cut itself (message.customerCut) goes in the customer's data_coding and
 * with the customer's concatenation, whatever the carrier's settings: udh8 / udh16 as that UDH
 * with the customer's reference, total and sequence and esm_class UDHI; sar as the three SAR TLVs
 * with those values and no UDH. Without a header the segments go as any message's, in the
 * customer's data_coding.
 */
import { concatUdh, gsm7SeptetCapacity, ucs2UnitCapacity } from '../../sms/index.js';
import type { OutboundMessage } from '../transport.js';
import type { ResolvedSmppTransportConfig } from './config.js';
import { ESM_SUBMIT_DEFAULT, ESM_UDHI } from './esm-class.js';
import { encodeSubmitSm } from './submit-sm-encoder.js';
import type { SubmitSmFields } from './submit-sm-fields.js';
import { cutHeaderOctets, cutPartRefusal, gsm7Septets, type CutRefusalStatus } from '../customer-cut.js';
import type { ConcatHeader, OutboundCustomerCut } from '../transport.js';
import { encodeCutText, encodePartText, type TextCodingResult } from './text-coding.js';

export type { SubmitSmFields, SubmitSmMandatoryFields } from './submit-sm-fields.js';

/** SMPP 3.4 §5.2.5/§5.2.6: destinations are international ISDN numbers. */
export const DESTINATION_TON = 1;
export const DESTINATION_NPI = 1;

export interface PlannedSubmit {
  /** The part numbers whose outcome is this PDU's outcome. */
  parts: number[];
  fields: SubmitSmFields;
  /** The submit_sm PDU encoded from `fields`, sequence_number 0 (encodeSubmitSm). */
  pdu: Buffer;
}

function planned(parts: number[], fields: SubmitSmFields): PlannedSubmit {
  return { parts, fields, pdu: encodeSubmitSm(fields) };
}

export type SubmitPlan =
  | { ok: true; submits: PlannedSubmit[] }
  | { ok: false; status: 'ENCODING_UNSUPPORTED' | 'SMS_PART_TOO_LONG' | 'SMS_BAD_PART' | CutRefusalStatus; detail: string };

type SmppSubmitConfig = Pick<
  ResolvedSmppTransportConfig,
  'concatenation' | 'dataCoding' | 'registeredDelivery' | 'priority' | 'validityPeriod' | 'sourceTon' | 'sourceNpi' | 'systemType'
>;

/** One submit_sm's fields, built in one literal so every PDU object has the same shape. */
function submitFields(message: OutboundMessage, config: SmppSubmitConfig, dataCoding: number, shortMessage: Buffer, esmClass: number): SubmitSmFields {
  return {
    service_type: '',
    source_addr_ton: config.sourceTon ?? message.sender.ton,
    source_addr_npi: config.sourceNpi ?? message.sender.npi,
    source_addr: message.sender.value,
    dest_addr_ton: DESTINATION_TON,
    dest_addr_npi: DESTINATION_NPI,
    destination_addr: message.destination,
    esm_class: esmClass,
    protocol_id: 0,
    priority_flag: config.priority,
    validity_period: config.validityPeriod ?? '',
    registered_delivery: config.registeredDelivery,
    data_coding: dataCoding,
    short_message: shortMessage,
  };
}

function requestedParts(message: OutboundMessage): readonly number[] | string {
  const total = message.segments.length;
  if (message.partNumbers === undefined) return total === 1 ? SINGLE_PART : message.segments.map((_, index) => index + 1);
  for (const part of message.partNumbers) {
    if (!Number.isInteger(part) || part < 1 || part > total) return `part ${part} is not between 1 and ${total}`;
  }
  return message.partNumbers;
}

const SINGLE_PART: readonly number[] = Object.freeze([1]);

/** Units the part's text takes against the UDH's room, and that room. */
function capacityCheck(text: string, message: OutboundMessage, udhOctets: number): string | null {
  if (message.encoding === 'UCS-2') {
    const capacity = ucs2UnitCapacity(udhOctets);
    return text.length > capacity ? `${text.length} UTF-16 units, room for ${capacity} beside a ${udhOctets}-octet UDH` : null;
  }
  const septets = gsm7Septets(text);
  const capacity = gsm7SeptetCapacity(udhOctets);
  return septets !== null && septets > capacity ? `${septets} septets, room for ${capacity} beside a ${udhOctets}-octet UDH` : null;
}

/** Any message's text in the carrier's coding; a customer's text without a header in the customer's. */
function encodeText(text: string, message: OutboundMessage, gsm7Coding: SmppSubmitConfig['dataCoding']['gsm7']): TextCodingResult {
  const cut = message.customerCut;
  return cut === undefined ? encodePartText(text, message.encoding, gsm7Coding) : encodeCutText(text, cut.dataCoding);
}

/** short_message = UDH + text octets. */
function withUdh(udh: Uint8Array, octets: Buffer): Buffer {
  const shortMessage = Buffer.allocUnsafe(udh.length + octets.length);
  shortMessage.set(udh, 0);
  shortMessage.set(octets, udh.length);
  return shortMessage;
}

/** The customer's one part with the customer's concatenation header (UDH or SAR TLVs), in the customer's data_coding. */
function planCutPart(
  message: OutboundMessage, dataCoding: OutboundCustomerCut['dataCoding'], concat: ConcatHeader, part: number, config: SmppSubmitConfig,
): PlannedSubmit | Extract<SubmitPlan, { ok: false }> {
  const text = message.segments[part - 1]!;
  const refusal = cutPartRefusal(text, dataCoding, cutHeaderOctets(concat));
  if (refusal !== null) return { ok: false, ...refusal };
  const coded = encodeCutText(text, dataCoding);
  if (!coded.ok) return coded;
  if (concat.scheme === 'sar') {
    const fields = submitFields(message, config, coded.dataCoding, coded.octets, ESM_SUBMIT_DEFAULT);
    fields.sar_msg_ref_num = concat.reference;
    fields.sar_total_segments = concat.total;
    fields.sar_segment_seqnum = concat.sequence;
    return planned([part], fields);
  }
  const udh = concatUdh(concat.reference, concat.total, concat.sequence, concat.scheme === 'udh8' ? 8 : 16);
  return planned([part], submitFields(message, config, coded.dataCoding, withUdh(udh, coded.octets), ESM_UDHI));
}

export function planSubmits(message: OutboundMessage, config: SmppSubmitConfig): SubmitPlan {
  const parts = requestedParts(message);
  if (typeof parts === 'string') return { ok: false, status: 'SMS_BAD_PART', detail: parts };
  const total = message.segments.length;
  const gsm7Coding = config.dataCoding.gsm7;
  const cut = message.customerCut;
  if (cut !== undefined && cut.concat !== null) {
    const submits: PlannedSubmit[] = [];
    for (const part of parts) {
      const submit = planCutPart(message, cut.dataCoding, cut.concat, part, config);
      if ('ok' in submit) return submit;
      submits.push(submit);
    }
    return { ok: true, submits };
  }

  if (config.concatenation === 'payload' && total > 1) {
    const coded = encodeText(message.segments.join(''), message, gsm7Coding);
    if (!coded.ok) return coded;
    const fields = submitFields(message, config, coded.dataCoding, Buffer.alloc(0), ESM_SUBMIT_DEFAULT);
    fields.message_payload = coded.octets;
    return { ok: true, submits: [planned([...parts], fields)] };
  }

  const submits: PlannedSubmit[] = [];
  for (const part of parts) {
    const text = message.segments[part - 1]!;
    const coded = encodeText(text, message, gsm7Coding);
    if (!coded.ok) return { ok: false, status: coded.status, detail: `part ${part}: ${coded.detail}` };
    if (total > 1 && (config.concatenation === 'udh8' || config.concatenation === 'udh16')) {
      const bits = config.concatenation === 'udh8' ? 8 : 16;
      // An 8-bit reference keeps the low octet of the message's 16-bit reference.
      const reference = bits === 8 ? message.concatReference & 0xff : message.concatReference & 0xffff;
      const udh = concatUdh(reference, total, part, bits);
      const tooLong = capacityCheck(text, message, udh.length);
      if (tooLong !== null) return { ok: false, status: 'SMS_PART_TOO_LONG', detail: `part ${part}: ${tooLong}` };
      submits.push(planned([part], submitFields(message, config, coded.dataCoding, withUdh(udh, coded.octets), ESM_UDHI)));
      continue;
    }
    const fields = submitFields(message, config, coded.dataCoding, coded.octets, ESM_SUBMIT_DEFAULT);
    if (total > 1) {
      fields.sar_msg_ref_num = message.concatReference & 0xffff;
      fields.sar_total_segments = total;
      fields.sar_segment_seqnum = part;
    }
    submits.push(planned([part], fields));
  }
  return { ok: true, submits };
}
