/**
 * Decodes a PDU as a modem shows it (TS 27.005 §3.1 <pdu>: SMSC address, then the TPDU) or a bare
 * TPDU, choosing the TPDU type from TP-MTI (TS 23.040 §9.2.3.1). MTI 01 is read as SMS-SUBMIT:
 * smsgate decodes submits it (or a test peer) sent, never SMS-SUBMIT-REPORTs.
 */
import { GatewayError, isGatewayError } from '../common/errors.js';
import { readSmscAddress } from './address.js';
import { type DecodedDeliver, type DecodedStatusReport, readDeliverTpdu, readStatusReportTpdu } from './deliver.js';
import { OctetReader, hexToOctets } from './octets.js';
import { type DecodedSubmit, MTI, readSubmitTpdu, tpMti } from './submit.js';

export type DecodedPdu = DecodedSubmit | DecodedDeliver | DecodedStatusReport;

export interface DecodeOptions {
  /**
   * Whether the hex starts with the SMSC address: 'present' (as +CMT/+CDS/+CMGR and AT+CMGS
   * data do), 'absent' (a bare TPDU), or 'auto' (try present, then absent). Default 'auto'.
   */
  smsc?: 'present' | 'absent' | 'auto';
}

function decodeTpdu(reader: OctetReader, withSmsc: boolean): DecodedPdu {
  const smsc = withSmsc ? readSmscAddress(reader) : null;
  const firstOctet = reader.peek('first octet');
  const mti = tpMti(firstOctet);
  let decoded: DecodedPdu;
  if (mti === MTI.deliver) decoded = readDeliverTpdu(reader, smsc);
  else if (mti === MTI.submit) decoded = readSubmitTpdu(reader, smsc);
  else if (mti === MTI.statusReport) decoded = readStatusReportTpdu(reader, smsc);
  else throw new GatewayError('PDU_WRONG_TYPE', 'TP-MTI 11 is reserved', { details: { firstOctet } });
  if (reader.remaining !== 0) {
    throw new GatewayError('PDU_TRAILING_OCTETS', `${reader.remaining} octets follow the end of the TPDU`, { details: { octets: reader.remaining } });
  }
  return decoded;
}

export function decodePdu(hex: string, options: DecodeOptions = {}): DecodedPdu {
  const octets = hexToOctets(hex);
  const mode = options.smsc ?? 'auto';
  if (mode !== 'auto') return decodeTpdu(new OctetReader(octets), mode === 'present');
  try {
    return decodeTpdu(new OctetReader(octets), true);
  } catch (withSmscError) {
    if (!isGatewayError(withSmscError)) throw withSmscError;
    try {
      return decodeTpdu(new OctetReader(octets), false);
    } catch {
      throw withSmscError;
    }
  }
}

/** Decodes the data written after an AT+CMGS=<length> prompt: the length says how many octets are TPDU. */
export function decodeCmgsPdu(hex: string, tpduOctets: number): DecodedSubmit {
  const octets = hexToOctets(hex);
  const reader = new OctetReader(octets);
  const smsc = readSmscAddress(reader);
  if (reader.remaining !== tpduOctets) {
    throw new GatewayError('PDU_LENGTH_MISMATCH', `AT+CMGS said ${tpduOctets} TPDU octets, the PDU has ${reader.remaining} after the SMSC field`, {
      details: { declared: tpduOctets, actual: reader.remaining },
    });
  }
  return readSubmitTpdu(reader, smsc);
}
