/**
 * Decodes one whole frame (frame-reader.ts) with the `smpp` package, and says what to do when it
 * cannot: the frame's length was sane, so the stream stays readable and the link is kept; a
 * request is answered generic_nack (SMPP 3.4 §4.3) with the status that fits and its own
 * sequence_number. This is cloudhopper-smpp's RecoverablePduException.
 */
import smpp from 'smpp';
import type { PDU } from 'smpp';
import { COMMAND_STATUS_CODE } from './command-status.js';
import { MAX_COMMAND_LENGTH_BYTES } from './frame-reader.js';

// The package refuses to decode any PDU longer than its PDU.maxLength (16 384 octets by default),
// which made every deliver_sm with a message_payload above ~16 000 octets an ESME_RINVCMDLEN.
// SMPP 3.4 §5.3.2.32 allows 65 535 octets of message_payload, so the package's bound is raised to
// the frame reader's, which already stops anything longer than a legal PDU can be.
smpp.PDU.maxLength = Math.max(smpp.PDU.maxLength, MAX_COMMAND_LENGTH_BYTES);

/** SMPP 3.4 §5.1.2.1: the command_id of a response has bit 31 set. */
const RESPONSE_BIT = 0x80000000;

export type DecodedFrame =
  | { kind: 'pdu'; pdu: PDU }
  | {
      kind: 'undecodable';
      commandId: number;
      sequenceNumber: number;
      /** A request (answered generic_nack) or a response (only logged: nothing answers a response). */
      isResponse: boolean;
      /** The generic_nack command_status: ESME_RINVCMDID, ESME_RINVCMDLEN or ESME_RSYSERR. */
      nackStatus: number;
      reason: string;
    };

export function decodeFrame(frame: Buffer): DecodedFrame {
  const commandId = frame.readUInt32BE(4);
  const sequenceNumber = frame.readUInt32BE(12);
  const isResponse = (commandId & RESPONSE_BIT) !== 0;
  const undecodable = (nackStatus: number, reason: string): DecodedFrame => ({ kind: 'undecodable', commandId, sequenceNumber, isResponse, nackStatus, reason });
  let pdu: PDU;
  try {
    pdu = new smpp.PDU(frame);
  } catch (err) {
    // A field or TLV that runs past command_length (the body is shorter than its own fields
    // say), or longer than the package decodes, is a length error (§5.1.3 ESME_RINVCMDLEN);
    // anything else the package throws is ours to own (ESME_RSYSERR).
    const message = err instanceof Error ? err.message : String(err);
    return undecodable(isLengthError(err) ? COMMAND_STATUS_CODE.ESME_RINVCMDLEN : COMMAND_STATUS_CODE.ESME_RSYSERR, message);
  }
  if (pdu.command === 'unknown') return undecodable(COMMAND_STATUS_CODE.ESME_RINVCMDID, `unknown command_id 0x${commandId.toString(16).padStart(8, '0')}`);
  return { kind: 'pdu', pdu };
}

function isLengthError(err: unknown): boolean {
  if (err instanceof RangeError) return true;
  return err instanceof Error && /length/i.test(err.message);
}
