/**
 * An ordinary deliver_sm (esm_class type 0, no receipted_message_id) whose text is a well-formed
 * receipt for one of our submitted parts is read as that receipt; see
 * src/receipts/unmarked-receipt.ts. Anything else stays an inbound message.
 */
import type { PDU } from 'smpp';
import { receiptInMessageText, type MessageIdMode } from '../../receipts/index.js';
import type { TransportHandlers } from '../transport.js';
import { deliverSmText } from './deliver-sm.js';

/**
 * Pauses before looking the id up again: the submit_sm_resp that names it may still be on its way
 * to the store (group commit), as with receipts that beat their response (Jasmin retries the
 * lookup for the same reason). Only texts that are well-formed receipts wait.
 */
export const UNMARKED_RECEIPT_LOOKUP_RETRIES_MS = [50, 200, 1_000] as const;

export async function isUnmarkedReceipt(
  pdu: PDU,
  handlers: TransportHandlers,
  idMode: MessageIdMode,
  retriesMs: readonly number[] = UNMARKED_RECEIPT_LOOKUP_RETRIES_MS,
): Promise<boolean> {
  const lookup = handlers.isSubmittedMessageId;
  if (lookup === undefined) return false;
  const receipt = receiptInMessageText(deliverSmText(pdu, 'receipt'), idMode);
  if (receipt === null) return false;
  if (await lookup(receipt.messageId)) return true;
  for (const delayMs of retriesMs) {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (await lookup(receipt.messageId)) return true;
  }
  return false;
}
