/**
 * smsgate/receipts: the pure receipt core (no I/O). Parses SMPP receipt text and TLVs, maps
 * TP-Status of modem status reports and normalises message ids.
 */
export { parseReceiptText, RECEIPT_LABELS } from './receipt-text.js';
export type { ParsedReceiptText, ReceiptField, ReceiptTextFields } from './receipt-text.js';
export {
  fitStatus,
  fullReceiptStatus,
  isDeliveredStatus,
  isFinalStatus,
  MAX_STATUS_CHARS,
  MESSAGE_STATE,
  MESSAGE_STATE_NAMES,
  messageStateName,
  receiptStatus,
  statusFromTpStatus,
} from './status.js';
export type { FittedStatus, MessageState, MessageStateName, ReceiptStatusInput } from './status.js';
export { MESSAGE_ID_MODES, normalizeMessageId } from './message-id.js';
export type { MessageIdMode } from './message-id.js';
export { parseReceiptDate, parseSmppReceipt } from './smpp-receipt.js';
export type { ParsedSmppReceipt, SmppReceiptInput, SmppReceiptResult } from './smpp-receipt.js';
export { receiptInMessageText } from './unmarked-receipt.js';
