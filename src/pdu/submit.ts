/**
 * TS 23.040 §9.2.2.2 SMS-SUBMIT, encoded for AT+CMGS in PDU mode (TS 27.005 §3.5.1): the SMSC
 * address octet 00 first ("use the SMSC stored in the SIM", TS 27.005 §3.1 <pdu>), so that the
 * <length> given to AT+CMGS counts the TPDU alone, as §3.5.1 requires.
 */
import { GatewayError } from '../common/errors.js';
import { type DestinationNumberType, type DecodedAddress, encodeDestinationAddress, readTpAddress } from './address.js';
import { type DataCodingScheme, parseDcs } from './dcs.js';
import { OctetReader, hexToOctets, octetsToHex } from './octets.js';
import { type DecodedUserData, decodeUserData } from './user-data.js';

/** TS 23.040 §9.2.3.1 TP-MTI values (bits 1-0 of the first octet) by direction. */
export const MTI = { deliver: 0b00, submit: 0b01, statusReport: 0b10 } as const;

/** TP-MTI of a TPDU's first octet (TS 23.040 §9.2.3.1: bits 1-0). */
export function tpMti(firstOctet: number): number {
  return firstOctet & 0b11;
}

/** Throws PDU_WRONG_TYPE when the first octet's TP-MTI is not the one the reader expects. */
export function checkMti(firstOctet: number, expected: number, name: string): void {
  if (tpMti(firstOctet) !== expected) {
    throw new GatewayError('PDU_WRONG_TYPE', `TP-MTI is ${tpMti(firstOctet)}, not ${name}`, { details: { firstOctet } });
  }
}

/** First-octet flag bits of an SMS-SUBMIT (TS 23.040 §9.2.2.2). */
export const SUBMIT_FLAGS = {
  rejectDuplicates: 0x04, // TP-RD
  vpfRelative: 0x10, // TP-VPF = 10 (bits 4-3): one octet, relative
  vpfEnhanced: 0x08, // TP-VPF = 01
  vpfAbsolute: 0x18, // TP-VPF = 11
  statusReportRequest: 0x20, // TP-SRR
  userDataHeader: 0x40, // TP-UDHI
  replyPath: 0x80, // TP-RP
} as const;

/** TS 23.040 §9.2.3.12.1 relative TP-VP: 0..143 (n+1)*5 min, 144..167 12 h + (n-143)*30 min, 168..196 (n-166) days, 197..255 (n-192) weeks. */
export function relativeValidityOctet(minutes: number): number {
  if (!Number.isFinite(minutes) || minutes < 5) {
    throw new GatewayError('PDU_BAD_VALIDITY', 'validity period must be at least 5 minutes', { details: { minutes } });
  }
  if (minutes <= 12 * 60) return Math.ceil(minutes / 5) - 1;
  if (minutes <= 24 * 60) return 143 + Math.ceil((minutes - 12 * 60) / 30);
  if (minutes <= 30 * 24 * 60) return Math.max(168, 166 + Math.ceil(minutes / (24 * 60)));
  return Math.min(255, Math.max(197, 192 + Math.ceil(minutes / (7 * 24 * 60))));
}

export function relativeValidityMinutes(octet: number): number {
  if (octet <= 143) return (octet + 1) * 5;
  if (octet <= 167) return 12 * 60 + (octet - 143) * 30;
  if (octet <= 196) return (octet - 166) * 24 * 60;
  return (octet - 192) * 7 * 24 * 60;
}

export interface SubmitTpduFields {
  /** Destination digits, no '+'. */
  destination: string;
  numberType: DestinationNumberType;
  statusReport: boolean;
  rejectDuplicates: boolean;
  /** Relative validity in minutes, or null for no TP-VP (TP-VPF 00). */
  validityMinutes: number | null;
  protocolId: number;
  dcs: number;
  /** TP-UD as packed by the SMS core (UDH included) and its TP-UDL (septets for GSM-7, octets otherwise). */
  userData: Uint8Array;
  udl: number;
  hasUserDataHeader: boolean;
}

export interface EncodedSubmitPdu {
  /** SMSC octet 00 + TPDU, hex, as written after the AT+CMGS prompt. */
  hex: string;
  /** The AT+CMGS=<length> argument: TPDU octets, without the SMSC octet. */
  tpduOctets: number;
}

/** TS 23.040 §9.2.3.16: at most 140 octets of user data per TPDU. */
export const MAX_USER_DATA_OCTETS = 140;

export function encodeSubmitTpdu(fields: SubmitTpduFields): EncodedSubmitPdu {
  if (fields.userData.length > MAX_USER_DATA_OCTETS) {
    throw new GatewayError('PDU_USER_DATA_TOO_LONG', `user data is ${fields.userData.length} octets, the TPDU holds ${MAX_USER_DATA_OCTETS}`, {
      details: { octets: fields.userData.length },
    });
  }
  let firstOctet = MTI.submit;
  if (fields.rejectDuplicates) firstOctet |= SUBMIT_FLAGS.rejectDuplicates;
  if (fields.validityMinutes !== null) firstOctet |= SUBMIT_FLAGS.vpfRelative;
  if (fields.statusReport) firstOctet |= SUBMIT_FLAGS.statusReportRequest;
  if (fields.hasUserDataHeader) firstOctet |= SUBMIT_FLAGS.userDataHeader;
  const validity = fields.validityMinutes === null ? [] : [relativeValidityOctet(fields.validityMinutes)];
  const tpdu = Uint8Array.from([
    firstOctet,
    0x00, // TP-MR: TS 27.005 §3.5.1, the ME assigns the message reference and returns it in +CMGS
    ...encodeDestinationAddress(fields.destination, fields.numberType),
    fields.protocolId,
    fields.dcs,
    ...validity,
    fields.udl,
    ...fields.userData,
  ]);
  return { hex: `00${octetsToHex(tpdu)}`, tpduOctets: tpdu.length };
}

export interface DecodedSubmit {
  type: 'SMS-SUBMIT';
  smsc: DecodedAddress | null;
  messageReference: number;
  destination: DecodedAddress;
  statusReportRequest: boolean;
  rejectDuplicates: boolean;
  replyPath: boolean;
  protocolId: number;
  dcs: number;
  dataCoding: DataCodingScheme;
  /** Relative validity in minutes; null when absent; the raw hex for enhanced/absolute formats. */
  validityMinutes: number | null;
  validityRaw: string | null;
  udl: number;
  userData: DecodedUserData;
}

/** Decodes the TPDU that follows the SMSC field (the reader sits on the first octet). */
export function readSubmitTpdu(reader: OctetReader, smsc: DecodedAddress | null): DecodedSubmit {
  const firstOctet = reader.octet('first octet');
  checkMti(firstOctet, MTI.submit, 'SMS-SUBMIT');
  const messageReference = reader.octet('TP-MR');
  const destination = readTpAddress(reader, 'TP-DA');
  const protocolId = reader.octet('TP-PID');
  const dcs = reader.octet('TP-DCS');
  const vpf = (firstOctet >> 3) & 0x03;
  let validityMinutes: number | null = null;
  let validityRaw: string | null = null;
  if (vpf === 2) {
    const octet = reader.octet('TP-VP');
    validityMinutes = relativeValidityMinutes(octet);
    validityRaw = octetsToHex(Uint8Array.of(octet));
  } else if (vpf !== 0) {
    validityRaw = octetsToHex(reader.take(7, 'TP-VP'));
  }
  const udl = reader.octet('TP-UDL');
  const dataCoding = parseDcs(dcs);
  const userData = decodeUserData(reader.rest(), udl, dataCoding.alphabet, (firstOctet & SUBMIT_FLAGS.userDataHeader) !== 0);
  return {
    type: 'SMS-SUBMIT',
    smsc,
    messageReference,
    destination,
    statusReportRequest: (firstOctet & SUBMIT_FLAGS.statusReportRequest) !== 0,
    rejectDuplicates: (firstOctet & SUBMIT_FLAGS.rejectDuplicates) !== 0,
    replyPath: (firstOctet & SUBMIT_FLAGS.replyPath) !== 0,
    protocolId,
    dcs,
    dataCoding,
    validityMinutes,
    validityRaw,
    udl,
    userData,
  };
}


