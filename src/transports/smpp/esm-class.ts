/**
 * SMPP 3.4 §5.2.12 esm_class, the one definition every SMPP part of smsgate reads and writes it
 * with (our client's submit_sm and deliver_sm, the server's submit_sm and deliver_sm to customers).
 */

/** Bit 6, UDHI: the user data (short_message or message_payload) starts with a user data header (3GPP TS 23.040 §9.2.3.24). */
export const ESM_UDHI = 0x40;

/** A submit_sm in default SMSC mode (bits 1-0 00), of the default message type (bits 5-2 0000), no feature bits. */
export const ESM_SUBMIT_DEFAULT = 0x00;

/** The message type of a deliver_sm / data_sm (bits 5-2, mask 0x3C). */
export const ESM_MESSAGE_TYPE_MASK = 0x3c;
export const ESM_MESSAGE_TYPE = {
  normal: 0x00,
  smscDeliveryReceipt: 0x04,
  smeDeliveryAck: 0x08,
  smeUserAck: 0x10,
  conversationAbort: 0x18,
  intermediateNotification: 0x20,
} as const;

/**
 * Types read as receipts: the SMSC delivery receipt, the SME delivery acknowledgement (the
 * handset confirming receipt, same Appendix B text) and the intermediate delivery notification
 * (typically ENROUTE, not final). A user acknowledgement (0x10) carries the user's reply text, so
 * it is an inbound message, as is a conversation abort (0x18, Korean CDMA).
 */
export const RECEIPT_TYPES: ReadonlySet<number> = new Set([
  ESM_MESSAGE_TYPE.smscDeliveryReceipt,
  ESM_MESSAGE_TYPE.smeDeliveryAck,
  ESM_MESSAGE_TYPE.intermediateNotification,
]);

/** True when esm_class marks a receipt by its type (a receipt sent as type 0 is found by its TLV, see deliver-sm.ts). */
export function isReceiptType(esmClass: number): boolean {
  return RECEIPT_TYPES.has(esmClass & ESM_MESSAGE_TYPE_MASK);
}
