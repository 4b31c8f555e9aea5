/**
 * One SMPP delivery receipt (deliver_sm with a receipt esm_class) read into the fields the engine
 * needs, from its short_message text and its TLVs. The TLVs win when present (SMPP 3.4 §5.3.2.12
 * receipted_message_id, §5.3.2.35 message_state) because they are typed and not free text.
 */
import { isCalendarDate, isTimeOfDay } from '../common/calendar.js';
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

/**
 * YYYYMMDDhhmmss as an ISO-8601 instant read as UTC, or undefined when it names no real instant.
 * Read digit by digit and written without a Date: it runs once per receipt on the protocol thread.
 */
function calendarInstant(digits: string): string | undefined {
  if (digits.length !== 14) return undefined;
  const year = digitsAt(digits, 0, 4);
  const month = digitsAt(digits, 4, 2);
  const day = digitsAt(digits, 6, 2);
  const hour = digitsAt(digits, 8, 2);
  const minute = digitsAt(digits, 10, 2);
  const second = digitsAt(digits, 12, 2);
  // Years before 0100 are no receipt's (and were refused when this went through Date.UTC, which reads 0-99 as 19YY).
  if (year < 100 || !isCalendarDate(year, month, day) || !isTimeOfDay(hour, minute, second)) return undefined;
  // Date.prototype.toISOString's form (years 0000-9999 here): YYYY-MM-DDThh:mm:ss.000Z.
  return `${digits.slice(0, 4)}-${digits.slice(4, 6)}-${digits.slice(6, 8)}T${digits.slice(8, 10)}:${digits.slice(10, 12)}:${digits.slice(12, 14)}.000Z`;
}

/** The decimal value of text[from, from + count), or -1 when any of them is not a digit. */
function digitsAt(text: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
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
