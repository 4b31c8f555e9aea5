/**
 * A whole message as SMS-SUBMIT PDUs, one per part: the SMS core splits and packs the text
 * (concatenation UDH, septet fill bits), this module wraps each part's user data in a TPDU.
 */
import {
  type EncodedPart, type Encoding, type MessagePlan, type NationalLanguage, concatUdh, encodeGsm7Septets, encodeParts, encodeUcs2, packUserData, planMessage,
} from '../sms/index.js';
import type { DestinationNumberType } from './address.js';
import { DCS } from './dcs.js';
import { type EncodedSubmitPdu, type SubmitTpduFields, encodeSubmitTpdu } from './submit.js';

export interface SubmitOptions {
  /** TP-SRR: ask the SC for an SMS-STATUS-REPORT. Default false. */
  statusReport?: boolean;
  /** Type of the destination number. Default 'international' (TON 1 / NPI 1, 0x91). */
  numberType?: DestinationNumberType;
  /** Relative TP-VP in minutes, or null to send none. Default 1440 (TP-VP 0xA7, 24 hours). */
  validityMinutes?: number | null;
  /** TP-RD. Default false. */
  rejectDuplicates?: boolean;
  /** TP-PID. Default 0x00 (TS 23.040 §9.2.3.9: plain SME-to-SME). */
  protocolId?: number;
}

export interface SubmitPart extends EncodedSubmitPdu {
  /** 1-based part number and the part count of the whole message. */
  sequence: number;
  total: number;
}

export interface SegmentedMessage {
  /** Destination digits, no '+'. */
  destination: string;
  encoding: Encoding;
  /** Per-part texts from planMessage(); segments.join('') is the whole text. */
  segments: readonly string[];
  /** Concatenation reference, the same for every part. */
  reference: number;
  referenceBits?: 8 | 16;
  /** National shift tables the segments were planned with (planMessage's singleShift / lockingShift). */
  singleShift?: NationalLanguage;
  lockingShift?: NationalLanguage;
}

export const DEFAULT_VALIDITY_MINUTES = 24 * 60;

/** One part whose concatenation header was chosen elsewhere (a customer's own cut), not by the split of a whole text. */
export interface PresetPart {
  /** Destination digits, no '+'. */
  destination: string;
  encoding: Encoding;
  /** This part's text alone. */
  text: string;
  /** The UDH it carries: TS 23.040 §9.2.3.24.1 (8-bit reference) or §9.2.3.24.8 (16-bit). */
  concat: { reference: number; referenceBits: 8 | 16; total: number; sequence: number };
}

/**
 * One SMS-SUBMIT for a part with a preset concatenation header, in GSM-7 (default alphabet) or
 * UCS-2. Throws SMS_NOT_GSM7 for a character outside GSM-7, SMS_BAD_CONCAT for a header out of
 * range and SMS_PART_TOO_LONG when the text does not fit beside its UDH.
 */
export function encodePresetSubmitPart(part: PresetPart, options: SubmitOptions = {}): SubmitPart {
  const { reference, referenceBits, total, sequence } = part.concat;
  const udh = concatUdh(reference, total, sequence, referenceBits);
  const payload = part.encoding === 'GSM-7' ? encodeGsm7Septets(part.text) : encodeUcs2(part.text);
  const encoded: EncodedPart = { sequence, total, udh, payload, units: part.encoding === 'GSM-7' ? payload.length : part.text.length };
  const { userData, udl } = packUserData(encoded, part.encoding);
  const pdu = encodeSubmitTpdu(submitTpduFields(part.destination, part.encoding, userData, udl, true, options));
  return { ...pdu, sequence, total };
}

function submitTpduFields(
  destination: string, encoding: Encoding, userData: Uint8Array, udl: number, hasUserDataHeader: boolean, options: SubmitOptions,
): SubmitTpduFields {
  return {
    destination,
    numberType: options.numberType ?? 'international',
    statusReport: options.statusReport ?? false,
    rejectDuplicates: options.rejectDuplicates ?? false,
    validityMinutes: options.validityMinutes === undefined ? DEFAULT_VALIDITY_MINUTES : options.validityMinutes,
    protocolId: options.protocolId ?? 0x00,
    dcs: encoding === 'UCS-2' ? DCS.ucs2 : DCS.gsm7,
    userData,
    udl,
    hasUserDataHeader,
  };
}

export function encodeSubmitParts(message: SegmentedMessage, options: SubmitOptions = {}): SubmitPart[] {
  const text = message.segments.join('');
  const plan: MessagePlan = {
    encoding: message.encoding,
    units: 0,
    parts: message.segments.length,
    text,
    segments: [...message.segments],
  };
  if (message.singleShift !== undefined) plan.singleShift = message.singleShift;
  if (message.lockingShift !== undefined) plan.lockingShift = message.lockingShift;
  const parts = encodeParts(plan, { reference: message.reference, referenceBits: message.referenceBits ?? 8 });
  return parts.map((part) => {
    const { userData, udl } = packUserData(part, message.encoding);
    const pdu = encodeSubmitTpdu(submitTpduFields(message.destination, message.encoding, userData, udl, part.udh !== null, options));
    return { ...pdu, sequence: part.sequence, total: part.total };
  });
}

/** Plans a raw text with the SMS core (replacements, encoding, split) and encodes every part. */
export function encodeTextSubmitParts(
  destination: string,
  rawText: string,
  options: SubmitOptions & { reference?: number; nationalLanguages?: readonly NationalLanguage[] } = {},
): SubmitPart[] {
  const plan = planMessage(rawText, options.nationalLanguages === undefined ? undefined : { nationalLanguages: options.nationalLanguages });
  const message: SegmentedMessage = { destination, encoding: plan.encoding, segments: plan.segments, reference: options.reference ?? 0 };
  if (plan.singleShift !== undefined) message.singleShift = plan.singleShift;
  if (plan.lockingShift !== undefined) message.lockingShift = plan.lockingShift;
  return encodeSubmitParts(message, options);
}
