/**
 * TS 23.040 §9.2.2.1 SMS-DELIVER and §9.2.2.3 SMS-STATUS-REPORT decoding (the TPDUs a modem
 * hands up in +CMT / +CDS / AT+CMGR, after the SMSC address).
 */
import { type DecodedAddress, readTpAddress } from './address.js';
import { type DataCodingScheme, parseDcs } from './dcs.js';
import type { OctetReader } from './octets.js';
import { checkMti, MTI } from './submit.js';
import { type DecodedTimestamp, readTimestamp } from './timestamp.js';
import { type DecodedUserData, decodeUserData } from './user-data.js';

/** First-octet flags shared by SMS-DELIVER and SMS-STATUS-REPORT (TS 23.040 §9.2.2.1, §9.2.2.3). */
export const MT_FLAGS = {
  noMoreMessages: 0x04, // TP-MMS (1 = no more messages waiting)
  loopPrevention: 0x08, // TP-LP
  statusReport: 0x20, // TP-SRI (deliver) / TP-SRQ (status report)
  userDataHeader: 0x40, // TP-UDHI
  replyPath: 0x80, // TP-RP (deliver)
} as const;

/** TS 23.040 §9.2.3.27 TP-Parameter-Indicator bits. */
const PI = { protocolId: 0x01, dcs: 0x02, udl: 0x04 } as const;

export interface DecodedDeliver {
  type: 'SMS-DELIVER';
  smsc: DecodedAddress | null;
  originator: DecodedAddress;
  moreMessagesToSend: boolean;
  statusReportIndication: boolean;
  replyPath: boolean;
  protocolId: number;
  dcs: number;
  dataCoding: DataCodingScheme;
  serviceCentreTimestamp: DecodedTimestamp;
  udl: number;
  userData: DecodedUserData;
}

export interface DecodedStatusReport {
  type: 'SMS-STATUS-REPORT';
  smsc: DecodedAddress | null;
  /** TP-MR of the SMS-SUBMIT this report is about (the +CMGS: <mr> value). */
  messageReference: number;
  recipient: DecodedAddress;
  serviceCentreTimestamp: DecodedTimestamp;
  dischargeTime: DecodedTimestamp;
  /** TS 23.040 §9.2.3.15 TP-ST. */
  status: number;
  /** TP-SRQ: set when the report answers an SMS-COMMAND rather than an SMS-SUBMIT. */
  reportsCommand: boolean;
  protocolId: number | null;
  dcs: number | null;
  userData: DecodedUserData | null;
}

export function readDeliverTpdu(reader: OctetReader, smsc: DecodedAddress | null): DecodedDeliver {
  const firstOctet = reader.octet('first octet');
  checkMti(firstOctet, MTI.deliver, 'SMS-DELIVER');
  const originator = readTpAddress(reader, 'TP-OA');
  const protocolId = reader.octet('TP-PID');
  const dcs = reader.octet('TP-DCS');
  const serviceCentreTimestamp = readTimestamp(reader, 'TP-SCTS');
  const udl = reader.octet('TP-UDL');
  const dataCoding = parseDcs(dcs);
  const userData = decodeUserData(reader.rest(), udl, dataCoding.alphabet, (firstOctet & MT_FLAGS.userDataHeader) !== 0);
  return {
    type: 'SMS-DELIVER',
    smsc,
    originator,
    moreMessagesToSend: (firstOctet & MT_FLAGS.noMoreMessages) === 0,
    statusReportIndication: (firstOctet & MT_FLAGS.statusReport) !== 0,
    replyPath: (firstOctet & MT_FLAGS.replyPath) !== 0,
    protocolId,
    dcs,
    dataCoding,
    serviceCentreTimestamp,
    udl,
    userData,
  };
}

export function readStatusReportTpdu(reader: OctetReader, smsc: DecodedAddress | null): DecodedStatusReport {
  const firstOctet = reader.octet('first octet');
  checkMti(firstOctet, MTI.statusReport, 'SMS-STATUS-REPORT');
  const messageReference = reader.octet('TP-MR');
  const recipient = readTpAddress(reader, 'TP-RA');
  const serviceCentreTimestamp = readTimestamp(reader, 'TP-SCTS');
  const dischargeTime = readTimestamp(reader, 'TP-DT');
  const status = reader.octet('TP-ST');
  const report: DecodedStatusReport = {
    type: 'SMS-STATUS-REPORT',
    smsc,
    messageReference,
    recipient,
    serviceCentreTimestamp,
    dischargeTime,
    status,
    reportsCommand: (firstOctet & MT_FLAGS.statusReport) !== 0,
    protocolId: null,
    dcs: null,
    userData: null,
  };
  // TS 23.040 §9.2.3.27: the optional TP-PI and the fields it announces; many SCs stop at TP-ST.
  if (reader.remaining === 0) return report;
  const pi = reader.octet('TP-PI');
  if (pi & PI.protocolId) report.protocolId = reader.octet('TP-PID');
  if (pi & PI.dcs) report.dcs = reader.octet('TP-DCS');
  if (pi & PI.udl) {
    const udl = reader.octet('TP-UDL');
    const alphabet = parseDcs(report.dcs ?? 0).alphabet;
    report.userData = decodeUserData(reader.rest(), udl, alphabet, (firstOctet & MT_FLAGS.userDataHeader) !== 0);
  }
  return report;
}
