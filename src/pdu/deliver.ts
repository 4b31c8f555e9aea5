/**
 * TS 23.040 §9.2.2.1 SMS-DELIVER and §9.2.2.3 SMS-STATUS-REPORT decoding (the TPDUs a modem
 * hands up in +CMT / +CDS / AT+CMGR, after the SMSC address).
 */
import { type DecodedAddress, readTpAddress } from './address.js';
import { type DataCodingScheme, parseDcs } from './dcs.js';
import { isGatewayError } from '../common/errors.js';
import { OctetReader } from './octets.js';
import { checkMti, MTI } from './submit.js';
import { type DecodedTimestamp, readTimestamp } from './timestamp.js';
import { type DecodedUserData, decodeUserData, userDataOctets } from './user-data.js';

/** First-octet flags shared by SMS-DELIVER and SMS-STATUS-REPORT (TS 23.040 §9.2.2.1, §9.2.2.3). */
export const MT_FLAGS = {
  noMoreMessages: 0x04, // TP-MMS (1 = no more messages waiting)
  loopPrevention: 0x08, // TP-LP
  statusReport: 0x20, // TP-SRI (deliver) / TP-SRQ (status report)
  userDataHeader: 0x40, // TP-UDHI
  replyPath: 0x80, // TP-RP (deliver)
} as const;

/**
 * TS 23.040 §9.2.3.27 TP-Parameter-Indicator bits: 0-2 announce TP-PID, TP-DCS, TP-UDL; 3-6 are
 * reserved; 7 says another TP-PI octet follows.
 */
const PI = { protocolId: 0x01, dcs: 0x02, udl: 0x04, reserved: 0x78, extension: 0x80 } as const;

/** TS 31.102 §4.2.25 (EF-SMS): the rest of a 176-octet SIM record after the TPDU is filled with 'FF'. */
const SIM_RECORD_FILL = 0xff;

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
  /** SIM record fill ('FF' octets) after TP-UD, ignored. */
  ignoredOctets: number;
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
  /**
   * Octets after TP-ST that were not read as fields (TS 23.040 §9.2.3.27): a TP-PI with reserved
   * bits set, optional fields that cannot be read, SIM record fill after them.
   */
  ignoredOctets: number;
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
  const userData = decodeUserData(reader.take(userDataOctets(udl, dataCoding.alphabet), 'TP-UD'), udl, dataCoding.alphabet, (firstOctet & MT_FLAGS.userDataHeader) !== 0);
  // Read from a SIM record (AT+CMGR / AT+CMGL) some modems hand up the record's 'FF' fill too.
  // Other octets after TP-UD stay unread, and decodePdu refuses them (PDU_TRAILING_OCTETS).
  const ignoredOctets = skipSimRecordFill(reader);
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
    ignoredOctets,
  };
}

/** Consumes the rest of the reader when it is all SIM record fill; returns how many octets that was. */
function skipSimRecordFill(reader: OctetReader): number {
  const rest = reader.peekRest();
  if (rest.length === 0 || !rest.every((octet) => octet === SIM_RECORD_FILL)) return 0;
  reader.rest();
  return rest.length;
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
    ignoredOctets: 0,
  };
  if (reader.remaining === 0) return report; // many SCs stop at TP-ST
  const afterStatus = reader.rest();
  const optional = readStatusReportOptionals(new OctetReader(afterStatus), firstOctet);
  if (optional === null) return { ...report, ignoredOctets: afterStatus.length };
  return { ...report, ...optional.fields, ignoredOctets: afterStatus.length - optional.octetsRead };
}

interface StatusReportOptionals {
  fields: Pick<DecodedStatusReport, 'protocolId' | 'dcs' | 'userData'>;
  octetsRead: number;
}

/**
 * TS 23.040 §9.2.3.27: the optional TP-PI after TP-ST and the fields it announces. A TP-PI with
 * reserved bits set is ignored, that is treated as absent (Android's GSM SmsMessage does the same:
 * some operators set a reserved bit to say no more data follows, and SIM record fill 'FF' reads
 * as such a TP-PI). Optional fields that cannot be read are discarded the same way: the report's
 * mandatory fields (TP-MR, TP-RA, the time stamps, TP-ST) are what a receipt needs, and refusing
 * the whole report for its optional tail would lose the status. Returns null when nothing is read.
 */
function readStatusReportOptionals(reader: OctetReader, firstOctet: number): StatusReportOptionals | null {
  try {
    const pi = reader.octet('TP-PI');
    if ((pi & PI.reserved) !== 0) return null;
    // Further TP-PI octets announce nothing this decoder knows of: skip them.
    for (let more = pi; (more & PI.extension) !== 0; ) more = reader.octet('TP-PI extension');
    const fields: StatusReportOptionals['fields'] = { protocolId: null, dcs: null, userData: null };
    if (pi & PI.protocolId) fields.protocolId = reader.octet('TP-PID');
    if (pi & PI.dcs) fields.dcs = reader.octet('TP-DCS');
    if (pi & PI.udl) {
      const udl = reader.octet('TP-UDL');
      const alphabet = parseDcs(fields.dcs ?? 0).alphabet;
      fields.userData = decodeUserData(reader.take(userDataOctets(udl, alphabet), 'TP-UD'), udl, alphabet, (firstOctet & MT_FLAGS.userDataHeader) !== 0);
    }
    return { fields, octetsRead: reader.position };
  } catch (err) {
    if (isGatewayError(err)) return null;
    throw err;
  }
}
