/**
 * A delivery receipt for a customer's submit_sm, as the deliver_sm smsgate sends back to it
 * (SMPP 3.4 §4.6.1, §5.2.12 esm_class 0x04, Appendix B receipt text, TLVs receipted_message_id
 * §5.3.2.12 and message_state §5.3.2.35). Pure: the caller gives the instants.
 *
 * src/receipts/ only parses receipt text (what carriers send us); this module writes it, in the
 * Appendix B layout that parser reads back (test/smpp-server/delivery checks the round trip).
 */
import { encodeGsm7Septets } from '../sms/gsm7.js';
import { DEFAULT_GSM7_CHARSET } from '../sms/gsm7-charset.js';
import { COMMAND_STATUS } from '../transports/smpp/command-status.js';
import { ESM_MESSAGE_TYPE } from '../transports/smpp/esm-class.js';
import type { CustomerCut } from './customer-cut.js';
import type { MessageStateName } from '../receipts/status.js';
import { MESSAGE_STATE, type DeliverSmFields, type MessageState } from './deliver-sm.js';

/**
 * The Appendix B `stat:` values smsgate writes: final states only, each sent with the
 * message_state of that name (§5.2.28, MESSAGE_STATE).
 */
export type ReceiptStat = Extract<MessageStateName, 'DELIVRD' | 'EXPIRED' | 'DELETED' | 'UNDELIV' | 'UNKNOWN' | 'REJECTD'>;

/** What the customer is told about its message. */
export interface ReceiptOutcome {
  stat: ReceiptStat;
  /** Three digits. */
  err: string;
  messageState: MessageState;
  delivered: boolean;
}

/** Long and short spellings carriers use for the Appendix B states (compared upper-cased). */
const STAT_SPELLINGS: Readonly<Record<string, ReceiptStat>> = {
  DELIVRD: 'DELIVRD', DELIVERED: 'DELIVRD',
  EXPIRED: 'EXPIRED',
  DELETED: 'DELETED',
  UNDELIV: 'UNDELIV', UNDELIVERABLE: 'UNDELIV',
  UNKNOWN: 'UNKNOWN',
  REJECTD: 'REJECTD', REJECTED: 'REJECTD',
};

const NAME_TO_COMMAND_STATUS: ReadonlyMap<string, { value: number; permanent: boolean }> = new Map(
  Object.entries(COMMAND_STATUS).map(([value, info]) => [info.name, { value: Number(value), permanent: info.kind === 'permanent' }]),
);

/**
 * The one mapping from a recipient's final state and status (its last_status: a carrier receipt's
 * stat, or the status a submit failure left) and the carrier's `err:` to what the customer's
 * receipt says. Whether it was delivered is the engine's verdict (the recipient's final state,
 * decided by isDeliveredStatus on the status as received, SPEC "Campaign Summary"), never
 * decided again here, so the receipt and the recipient always agree:
 *
 * - delivered: DELIVRD, err 000 unless the carrier gave one;
 * - else an Appendix B state (EXPIRED, DELETED, UNDELIV, UNKNOWN, REJECTD, or the long spellings
 *   UNDELIVERABLE, REJECTED, compared upper-cased): that state;
 * - an SMPP command_status name (the upstream SMSC refused the submit_sm): REJECTD when SMPP 3.4
 *   §5.1.3 classes it permanent (ESME_RINVDSTADR...), UNDELIV when it is a temporary one whose
 *   retries were spent (ESME_RTHROTTLED, ESME_RMSGQFUL...); err is the command_status value;
 * - anything else (NO_ROUTE, NO_OUTCOME, a transport's own failure, a carrier's unknown word, a
 *   delivered-looking status the engine did not count delivered, e.g. a lower-case `delivrd`):
 *   UNDELIV: the message did not reach the handset as far as smsgate counts it.
 *
 * err: the carrier's err when it is 1 to 3 digits, else the command_status value when it fits
 * three digits, else 000.
 */
export function receiptOutcomeOf(delivered: boolean, lastStatus: string, carrierErr: string | null): ReceiptOutcome {
  const status = lastStatus.trim().toUpperCase();
  const esme = commandStatusOf(status);
  const stat: ReceiptStat = delivered ? 'DELIVRD' : undeliveredStatOf(status, esme);
  const err = threeDigits(carrierErr) ?? (esme !== undefined && esme.value <= 999 ? String(esme.value).padStart(3, '0') : '000');
  return { stat, err, messageState: MESSAGE_STATE[stat], delivered };
}

/** The stat of a message the engine did not count delivered: never DELIVRD. */
function undeliveredStatOf(status: string, esme: { permanent: boolean } | undefined): Exclude<ReceiptStat, 'DELIVRD'> {
  const spelled = STAT_SPELLINGS[status];
  if (spelled !== undefined && spelled !== 'DELIVRD') return spelled;
  return esme !== undefined && esme.permanent ? 'REJECTD' : 'UNDELIV';
}

/** An SMPP command_status name as our client writes it (its table's names, or ESME_0xNNNNNNNN). */
function commandStatusOf(status: string): { value: number; permanent: boolean } | undefined {
  const known = NAME_TO_COMMAND_STATUS.get(status);
  if (known !== undefined) return known;
  const hex = /^ESME_0X([0-9A-F]{8})$/.exec(status);
  return hex === null ? undefined : { value: Number.parseInt(hex[1] ?? '0', 16), permanent: true };
}

function threeDigits(value: string | null): string | undefined {
  const trimmed = value?.trim() ?? '';
  return /^\d{1,3}$/.test(trimmed) ? trimmed.padStart(3, '0') : undefined;
}

/** SMPP 3.4 Appendix B dates: YYMMDDhhmm, UTC (the receipt carries no zone; our parser reads UTC). */
export function receiptDate(atMs: number): string {
  const d = new Date(atMs);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(d.getUTCFullYear() % 100)}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}`;
}

/** Appendix B: `text:` holds the first 20 characters of the message. */
export const RECEIPT_TEXT_CHARS = 20;

export interface ReceiptTextInput {
  messageId: string;
  outcome: ReceiptOutcome;
  submittedAtMs: number;
  doneAtMs: number;
  /** The message's text (the part as the customer sent it, decoded). */
  text: string;
}

/**
 * `id:<id> sub:001 dlvrd:<001|000> submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:<stat> err:<err> text:<first 20>`.
 * The receipt travels with data_coding 0 (GSM 03.38, as the server reads a customer's data_coding
 * 0), so `text:` stops before the first character that alphabet lacks: a sample of the message,
 * never a substitute character.
 */
export function formatReceiptText(input: ReceiptTextInput): string {
  const sample = gsmPrefix([...input.text].slice(0, RECEIPT_TEXT_CHARS).join(''));
  return `id:${input.messageId} sub:001 dlvrd:${input.outcome.delivered ? '001' : '000'} submit date:${receiptDate(input.submittedAtMs)}`
    + ` done date:${receiptDate(input.doneAtMs)} stat:${input.outcome.stat} err:${input.outcome.err} text:${sample}`;
}

/** The longest prefix of the text the GSM 03.38 default alphabet encodes. */
function gsmPrefix(text: string): string {
  let end = 0;
  while (end < text.length && (DEFAULT_GSM7_CHARSET.encode[text.charCodeAt(end)] ?? -1) >= 0) end++;
  return text.slice(0, end);
}

export interface ReceiptDeliverSmInput {
  /** smsgate's message id for the submit (the campaign id the customer got in submit_sm_resp). */
  messageId: string;
  /** The handset the message went to. */
  recipientMsisdn: string;
  /** The customer's source address (the campaign's sender) and how it addressed it. */
  customerSourceAddr: string;
  cut: Pick<CustomerCut, 'sourceAddrTon' | 'sourceAddrNpi'>;
  outcome: ReceiptOutcome;
  submittedAtMs: number;
  doneAtMs: number;
  text: string;
}

/**
 * The receipt's deliver_sm: from the handset (international, E.164: ton 1 npi 1) to the customer's
 * original source address with its ton/npi, esm_class 0x04, data_coding 0, Appendix B text, and
 * the TLVs a customer matches on without parsing text.
 */
export function receiptDeliverSm(input: ReceiptDeliverSmInput): DeliverSmFields {
  const text = formatReceiptText({ messageId: input.messageId, outcome: input.outcome, submittedAtMs: input.submittedAtMs, doneAtMs: input.doneAtMs, text: input.text });
  return {
    sourceAddrTon: 1,
    sourceAddrNpi: 1,
    sourceAddr: input.recipientMsisdn,
    destAddrTon: input.cut.sourceAddrTon,
    destAddrNpi: input.cut.sourceAddrNpi,
    destinationAddr: input.customerSourceAddr,
    esmClass: ESM_MESSAGE_TYPE.smscDeliveryReceipt,
    dataCoding: 0,
    // Unpacked septets, one per octet: SMPP data_coding 0 as the server reads it from customers.
    shortMessageHex: Buffer.from(encodeGsm7Septets(text)).toString('hex'),
    receiptedMessageId: input.messageId,
    messageState: input.outcome.messageState,
  };
}
