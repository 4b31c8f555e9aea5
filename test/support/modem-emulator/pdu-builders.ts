/**
 * The PDUs a network sends to a modem, built for the emulator: SMS-DELIVER (TS 23.040 §9.2.2.1)
 * and SMS-STATUS-REPORT (§9.2.2.3), each after an SMSC address (TS 27.005 §3.1 <pdu>).
 */
import { encodeSemiOctets, octetsToHex } from '../../../src/pdu/index.js';
import { concatUdh, encodeGsm7Septets, encodeUcs2, packSeptets } from '../../../src/sms/index.js';

function address(digits: string): number[] {
  return [digits.length, 0x91, ...encodeSemiOctets(digits)];
}

function smscField(digits: string): number[] {
  const body = encodeSemiOctets(digits);
  return [body.length + 1, 0x91, ...body];
}

function swapped(n: number): number {
  return ((n % 10) << 4) | Math.floor(n / 10);
}

/** TS 23.040 §9.2.3.11: the time stamp in UTC (zone 00). */
export function encodeTimestamp(at: Date): number[] {
  return [
    at.getUTCFullYear() % 100, at.getUTCMonth() + 1, at.getUTCDate(), at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds(),
  ].map(swapped).concat([0x00]);
}

export interface DeliverInput {
  smsc: string;
  from: string;
  text: string;
  at: Date;
  /** Concatenation of a multipart message: 8-bit reference. */
  concat?: { reference: number; total: number; sequence: number };
}

export function buildDeliverPdu(input: DeliverInput): { hex: string; tpduOctets: number } {
  const isGsm = /^[\x20-\x7e]*$/.test(input.text) && !/[`\\[\]{}|^~$@_]/.test(input.text);
  const udh = input.concat ? concatUdh(input.concat.reference, input.concat.total, input.concat.sequence, 8) : new Uint8Array(0);
  let userData: Uint8Array;
  let udl: number;
  if (isGsm) {
    const septets = encodeGsm7Septets(input.text);
    const udhSeptets = Math.ceil((udh.length * 8) / 7);
    const fill = udhSeptets * 7 - udh.length * 8;
    userData = Uint8Array.from([...udh, ...packSeptets(septets, fill)]);
    udl = udhSeptets + septets.length;
  } else {
    userData = Uint8Array.from([...udh, ...encodeUcs2(input.text)]);
    udl = userData.length;
  }
  const firstOctet = 0x04 | (udh.length > 0 ? 0x40 : 0); // SMS-DELIVER, TP-MMS: no more messages
  const tpdu = [firstOctet, ...address(input.from), 0x00, isGsm ? 0x00 : 0x08, ...encodeTimestamp(input.at), udl, ...userData];
  return { hex: octetsToHex(Uint8Array.from([...smscField(input.smsc), ...tpdu])), tpduOctets: tpdu.length };
}

export interface StatusReportInput {
  smsc: string;
  messageReference: number;
  recipient: string;
  submittedAt: Date;
  dischargedAt: Date;
  /** TS 23.040 §9.2.3.15 TP-ST. */
  status: number;
}

export function buildStatusReportPdu(input: StatusReportInput): { hex: string; tpduOctets: number } {
  const tpdu = [
    0x06, // SMS-STATUS-REPORT, TP-MMS
    input.messageReference & 0xff,
    ...address(input.recipient),
    ...encodeTimestamp(input.submittedAt),
    ...encodeTimestamp(input.dischargedAt),
    input.status,
  ];
  return { hex: octetsToHex(Uint8Array.from([...smscField(input.smsc), ...tpdu])), tpduOctets: tpdu.length };
}

/** TS 31.102 §4.2.25: an EF-SMS record holds a status octet and 175 octets; the rest after the TPDU is 'FF'. */
export const SIM_RECORD_TPDU_OCTETS = 175;

/** The PDU as a modem that hands up the whole SIM record shows it: the TPDU followed by 'FF' fill. */
export function withSimRecordFill(pdu: { hex: string; tpduOctets: number }): string {
  return pdu.hex + 'FF'.repeat(SIM_RECORD_TPDU_OCTETS - pdu.tpduOctets);
}
