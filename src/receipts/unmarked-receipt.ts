/**
 * Receipts sent as plain messages. Some SMSCs deliver a receipt in a deliver_sm whose esm_class
 * marks an ordinary message (SMPP 3.4 §5.2.12 type 0) and that carries no receipted_message_id,
 * only the Appendix B text (a known pain of other gateways). Such a text is read as a receipt
 * only when it is well formed and the caller confirms the id is one of its submitted parts: an
 * MO message that merely looks like a receipt stays a message.
 */
import type { MessageIdMode } from './message-id.js';
import { parseReceiptText } from './receipt-text.js';
import { parseSmppReceipt, type ParsedSmppReceipt } from './smpp-receipt.js';

/**
 * The receipt in an unmarked message's text, or null when the text is not a well-formed receipt:
 * it needs a non-empty `id:` and a non-empty `stat:` (the two fields that make a receipt usable).
 */
export function receiptInMessageText(text: string, idMode: MessageIdMode): ParsedSmppReceipt | null {
  const fields = parseReceiptText(text);
  if (!fields.id || !fields.stat) return null;
  const parsed = parseSmppReceipt({ text }, idMode);
  return parsed.ok ? parsed.receipt : null;
}
