/**
 * Receipt status rules shared by every transport.
 *
 * SPEC "Delivery Receipt": Status is at most 30 characters, alphabetic gateway `stat:` values are
 * passed through with their case unchanged, and the raw gateway status text is used when no
 * `stat:` value can be read. The summary counts a receipt as delivered when its status begins
 * with `DELIV`.
 */

import { parseReceiptText } from './receipt-text.js';

/** SPEC "Limits": Status (receipt) up to 30 characters. */
export const MAX_STATUS_CHARS = 30;

/**
 * SMPP 3.4 §5.2.28 message_state, each under its Appendix B receipt name: the one table the
 * receipts read (the TLV's name) and the SMPP server writes (a customer's receipt and query_sm).
 * Values SMPP 3.4 does not define (0 SCHEDULED and 9 SKIPPED come from SMPP 5.0) are not here:
 * the receipt text is used instead.
 */
export const MESSAGE_STATE = { ENROUTE: 1, DELIVRD: 2, EXPIRED: 3, DELETED: 4, UNDELIV: 5, ACCEPTD: 6, UNKNOWN: 7, REJECTD: 8 } as const;
export type MessageStateName = keyof typeof MESSAGE_STATE;
export type MessageState = (typeof MESSAGE_STATE)[MessageStateName];

/** The same table by value: each message_state's Appendix B name (exported as smsgate/receipts has since its first release). */
export const MESSAGE_STATE_NAMES: Readonly<Record<number, MessageStateName>> = Object.fromEntries(
  (Object.keys(MESSAGE_STATE) as MessageStateName[]).map((name) => [MESSAGE_STATE[name], name]),
);

/** The Appendix B name of a message_state value, undefined for one SMPP 3.4 does not define. */
export function messageStateName(messageState: number): MessageStateName | undefined {
  return MESSAGE_STATE_NAMES[messageState];
}

/**
 * Statuses after which the network will send nothing more for the message. Compared on the
 * upper-cased status, so `delivrd` and `Delivered` behave like `DELIVRD`.
 */
const INTERMEDIATE_STATUSES: ReadonlySet<string> = new Set([
  'ENROUTE',
  // Many carriers send ACCEPTD as "accepted for delivery" before the real outcome; treating it as
  // final would count a message undelivered that later arrives.
  'ACCEPTD',
  'ACCEPTED',
  'BUFFRED',
  'BUFFERED',
  'SCHEDULED',
  'PENDING',
  'SENT',
]);

/**
 * True when no further receipt is expected. Every status that is not a known intermediate one is
 * final (UNDELIV, EXPIRED, DELETED, REJECTD, UNKNOWN, and any status we do not recognise): an
 * unrecognised status is the network's last word as far as we can tell, and leaving the
 * recipient pending forever would be worse than counting it undelivered.
 */
export function isFinalStatus(status: string): boolean {
  return !INTERMEDIATE_STATUSES.has(status.trim().toUpperCase());
}

/** SPEC "Campaign Summary": delivered = receipts whose parsed status begins with `DELIV`. */
export function isDeliveredStatus(status: string): boolean {
  return status.startsWith('DELIV');
}

export interface FittedStatus {
  status: string;
  /** Characters the status had before it was cut to MAX_STATUS_CHARS; absent when it fitted. */
  truncatedFromChars?: number;
}

/**
 * Fits a status into the 30 characters the webhook allows. A longer status keeps its first 30
 * characters and says so (truncatedFromChars) so the caller logs it: never silently cut.
 */
export function fitStatus(status: string): FittedStatus {
  const chars = Array.from(status);
  if (chars.length <= MAX_STATUS_CHARS) return { status };
  return { status: chars.slice(0, MAX_STATUS_CHARS).join(''), truncatedFromChars: chars.length };
}

const ALPHABETIC = /^[A-Za-z]+$/;

/**
 * What a receipt's status is read from. parseReceiptText()'s result fits as it is (it has `stat`
 * and `raw`); `rawText` is accepted as another name for `raw`.
 */
export interface ReceiptStatusInput {
  /** The `stat:` value of the receipt text, if one was found. */
  stat?: string | undefined;
  /** SMPP 3.4 §5.2.28 message_state TLV (0x0427), if present. */
  messageState?: number | undefined;
  /** The whole receipt text as received. */
  raw?: string | undefined;
  rawText?: string | undefined;
}

/**
 * The recipient's status for one receipt, before fitting to 30 characters:
 * 1. the message_state TLV's name when the TLV is present and defined by SMPP 3.4;
 * 2. else an alphabetic `stat:` value exactly as sent (case unchanged);
 * 3. else a non-empty, non-alphabetic `stat:` value as sent (the raw status text, e.g. `2`);
 * 4. else the whole receipt text, trimmed (no `stat:` could be read at all);
 * 5. else `UNKNOWN` for an empty receipt.
 */
export function fullReceiptStatus(input: ReceiptStatusInput): string {
  if (input.messageState !== undefined) {
    const name = messageStateName(input.messageState);
    if (name !== undefined) return name;
  }
  const stat = input.stat?.trim();
  if (stat !== undefined && ALPHABETIC.test(stat)) return stat;
  if (stat !== undefined && stat.length > 0) return stat;
  const raw = (input.raw ?? input.rawText ?? '').trim();
  return raw.length > 0 ? raw : 'UNKNOWN';
}

/**
 * fullReceiptStatus() fitted to the webhook's 30 characters (first 30 kept). Give it the
 * receipt text, or parsed fields, and optionally the message_state TLV. This function cannot
 * report a cut: code that must log one uses fitStatus() or parseSmppReceipt()'s
 * truncatedFromChars, as the SMPP transport does.
 */
export function receiptStatus(input: string | ReceiptStatusInput, tlvs: { messageState?: number | undefined } = {}): string {
  const source: ReceiptStatusInput = typeof input === 'string' ? parseReceiptText(input) : input;
  const messageState = tlvs.messageState ?? source.messageState;
  return fitStatus(fullReceiptStatus({ ...source, messageState })).status;
}

/**
 * 3GPP TS 23.040 §9.2.3.15 TP-Status of an SMS-STATUS-REPORT, as a receipt status:
 * - 0x00-0x02 short message transaction completed (received, forwarded, replaced): DELIVRD
 * - 0x20-0x3F temporary error, SC still trying: ENROUTE (not final)
 * - 0x40-0x5F permanent error: UNDELIV, except 0x41 incompatible destination and 0x43 not
 *   obtainable (REJECTD) and 0x46 validity period expired (EXPIRED)
 * - 0x60-0x7F temporary error, SC stopped trying: UNDELIV
 * - reserved and SC-specific values (0x03-0x1F, 0x80-0xFF): UNKNOWN, which isFinalStatus treats
 *   as final and not delivered; the report says the SC is done but not how, and waiting for a
 *   further report that will never come would leave the recipient pending forever.
 */
export function statusFromTpStatus(tpSt: number): string {
  return TP_STATUS_RANGES.find((range) => tpSt >= range.first && tpSt <= range.last)?.status ?? 'UNKNOWN';
}

/** The ranges above as data; the first that holds the value wins, so single values precede their block. */
const TP_STATUS_RANGES: ReadonlyArray<{ first: number; last: number; status: string }> = [
  { first: 0x00, last: 0x02, status: 'DELIVRD' },
  { first: 0x20, last: 0x3f, status: 'ENROUTE' },
  { first: 0x41, last: 0x41, status: 'REJECTD' },
  { first: 0x43, last: 0x43, status: 'REJECTD' },
  { first: 0x46, last: 0x46, status: 'EXPIRED' },
  { first: 0x40, last: 0x7f, status: 'UNDELIV' },
];
