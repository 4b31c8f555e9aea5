/**
 * Reading a deliver_sm (SMPP 3.4 §4.6.1), or a data_sm (§4.7.1) used the same way, as the smpp
 * package decodes it: is it a receipt, and what is its text.
 */
import smpp from 'smpp';
import type { DecodedShortMessage, PDU } from 'smpp';
import type { SmppReceiptInput } from '../../receipts/index.js';
import { ESM_MESSAGE_TYPE, ESM_MESSAGE_TYPE_MASK, RECEIPT_TYPES } from './esm-class.js';
import { rawUserData } from './mo-user-data.js';
import { DATA_CODING } from './text-coding.js';

/** The alphabet is read from data_coding's low four bits (SMPP 3.4 §5.2.19 lists codings 0x00-0x0F). */
const DATA_CODING_ALPHABET_MASK = 0x0f;

export { ESM_MESSAGE_TYPE, ESM_MESSAGE_TYPE_MASK } from './esm-class.js';

function numberField(pdu: PDU, name: string): number | undefined {
  const value = pdu[name];
  return typeof value === 'number' ? value : undefined;
}

function stringField(pdu: PDU, name: string): string | undefined {
  const value = pdu[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * A receipt by its esm_class type, or (some SMSCs send receipts as type 0) a deliver_sm that
 * carries a receipted_message_id TLV, which only receipts have (SMPP 3.4 §5.3.2.12).
 */
export function isReceiptDeliverSm(pdu: PDU): boolean {
  const messageType = (numberField(pdu, 'esm_class') ?? 0) & ESM_MESSAGE_TYPE_MASK;
  return RECEIPT_TYPES.has(messageType) || (messageType === ESM_MESSAGE_TYPE.normal && stringField(pdu, 'receipted_message_id') !== undefined);
}

function decodedMessage(value: unknown): DecodedShortMessage | undefined {
  if (typeof value === 'object' && value !== null && 'message' in value) return value as DecodedShortMessage;
  return undefined;
}

/**
 * The text of short_message, or of message_payload when short_message is empty.
 *
 * The package decodes data_coding 0 and 1 with its GSM 03.38 table. That is right for an MO
 * message in the SMSC default alphabet, but receipts are ASCII (SMPP 3.4 Appendix B), and GSM
 * maps a few ASCII octets to other characters (0x40 '@' -> '¡', 0x5F '_' -> '§'). For a receipt,
 * and for data_coding 1 (IA5) always, the GSM decoding is reversed to get the octets back
 * (exact for 0x00-0x7F) and they are read as ASCII/Latin-1. Undecoded binary is read as Latin-1.
 */
export function deliverSmText(pdu: PDU, purpose: 'receipt' | 'inbound'): string {
  const coding = (numberField(pdu, 'data_coding') ?? 0) & DATA_CODING_ALPHABET_MASK;
  const gsmDecoded = coding === DATA_CODING.smscDefault || coding === DATA_CODING.ia5;
  if (gsmDecoded && (purpose === 'receipt' || coding === DATA_CODING.ia5)) {
    // The octets as received, read as ASCII/Latin-1: what reversing the package's GSM decoding
    // gives for 0x00-0x7F, without a decode and re-encode through its per-call coder lookup per
    // receipt (about 4% of the gateway's CPU). Chosen as below.
    const raw = rawUserData(pdu);
    const octets = raw.short_message !== undefined && raw.short_message.length > 0 ? raw.short_message : raw.message_payload ?? raw.short_message;
    if (octets !== undefined) return octets.toString('latin1');
  }
  const shortMessage = decodedMessage(pdu['short_message']);
  const payload = decodedMessage(pdu['message_payload']);
  const chosen = shortMessage !== undefined && shortMessage.message.length > 0 ? shortMessage : payload ?? shortMessage;
  if (chosen === undefined) return '';
  const message = chosen.message;
  if (typeof message !== 'string') return message.toString('latin1');
  if (gsmDecoded && (purpose === 'receipt' || coding === DATA_CODING.ia5)) return smpp.encodings.ASCII.encode(message).toString('latin1');
  return message;
}

export function receiptInput(pdu: PDU): SmppReceiptInput {
  return {
    text: deliverSmText(pdu, 'receipt'),
    receiptedMessageId: stringField(pdu, 'receipted_message_id'),
    messageState: numberField(pdu, 'message_state'),
  };
}
