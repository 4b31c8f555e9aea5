/**
 * One SMPP delivery receipt (deliver_sm with a receipt esm_class) read into the fields the engine
 * needs, from its short_message text and its TLVs. The TLVs win when present (SMPP 3.4 §5.3.2.12
 * receipted_message_id, §5.3.2.35 message_state) because they are typed and not free text.
 */
import { normalizeMessageId, type MessageIdMode } from './message-id.js';
import { parseReceiptText } from './receipt-text.js';
import { fitStatus, fullReceiptStatus, isFinalStatus } from './status.js';

export interface SmppReceiptInput {
  /** short_message (or message_payload) decoded as text. */
  text: string;
  /** receipted_message_id TLV (0x001E), if present. */
  receiptedMessageId?: string | undefined;
  /** message_state TLV (0x0427), if present. */
  messageState?: number | undefined;
}

export interface ParsedSmppReceipt {
  /** Normalised with the carrier's mode (see normalizeMessageId). */
  messageId: string;
  /** At most 30 characters; see truncatedFromChars. */
  status: string;
  final: boolean;
  /** The `err:` value as sent, if any. */
  errorCode?: string;
  /** `done date:` as an ISO-8601 instant, read as UTC (the receipt carries no zone). */
  doneAt?: string;
  /** Set when the status was longer than 30 characters and cut: the caller logs it. */
  truncatedFromChars?: number;
  raw: string;
}

export type SmppReceiptResult =
  | { ok: true; receipt: ParsedSmppReceipt }
  | { ok: false; reason: 'NO_MESSAGE_ID'; raw: string };

/**
 * SMPP 3.4 Appendix B dates are YYMMDDhhmm; many SMSCs add ss (YYMMDDhhmmss), some write a
 * four-digit year (YYYYMMDDhhmmss, cloudhopper's fixture `submit date:20110314181534`; and
 * YYYYMMDDhhmm, Jasmin's fixture `submit date:201506201641`). Two-digit years are 20YY. Twelve
 * digits are read as YYMMDDhhmmss first and as YYYYMMDDhhmm when that is no calendar instant.
 * Returns undefined for anything that is not a real calendar instant.
 */
export function parseReceiptDate(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const digits = value.trim();
  if (!/^\d+$/.test(digits)) return undefined;
  if (digits.length === 10) return calendarInstant(`20${digits}00`);
  if (digits.length === 12) return calendarInstant(`20${digits}`) ?? calendarInstant(`${digits}00`);
  if (digits.length === 14) return calendarInstant(digits);
  return undefined;
}

/** YYYYMMDDhhmmss as an ISO-8601 instant read as UTC, or undefined when it names no real instant. */
function calendarInstant(digits: string): string | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(digits);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  return date.toISOString();
}

export function parseSmppReceipt(input: SmppReceiptInput, idMode: MessageIdMode): SmppReceiptResult {
  const fields = parseReceiptText(input.text);
  const rawId = input.receiptedMessageId?.trim() || fields.id?.trim() || '';
  if (rawId.length === 0) return { ok: false, reason: 'NO_MESSAGE_ID', raw: input.text };
  const fitted = fitStatus(fullReceiptStatus({ stat: fields.stat, messageState: input.messageState, raw: input.text }));
  const receipt: ParsedSmppReceipt = {
    messageId: normalizeMessageId(rawId, idMode),
    status: fitted.status,
    final: isFinalStatus(fitted.status),
    raw: input.text,
  };
  if (fields.err !== undefined && fields.err.length > 0) receipt.errorCode = fields.err;
  const doneAt = parseReceiptDate(fields.doneDate);
  if (doneAt !== undefined) receipt.doneAt = doneAt;
  if (fitted.truncatedFromChars !== undefined) receipt.truncatedFromChars = fitted.truncatedFromChars;
  return { ok: true, receipt };
}
