/**
 * A customer's submit_sm as it went in (src/smpp-server/ stores it on its campaign): its cut (the
 * part goes upstream exactly so) and which receipts it asked for. Pure and inner: the engine plans
 * and answers such campaigns from this, and the SMPP server writes it.
 */
import type { ConcatHeader } from '../transports/transport.js';

/** How long a customer's receipt or inbound message waits for it to bind (smppServer.receiptRetentionHours' default). */
export const DEFAULT_RECEIPT_RETENTION_HOURS = 72;

/** receiptRetentionHours (the default when not set) in milliseconds. */
export function receiptRetentionMs(hours: number = DEFAULT_RECEIPT_RETENTION_HOURS): number {
  return hours * 3_600_000;
}

/** SMPP data_coding values the server takes (SMSC default alphabet as GSM 03.38, Latin-1, UCS-2). */
export type CustomerDataCoding = 0 | 3 | 8;

/**
 * One submit_sm as the customer cut it, stored as JSON in campaigns.smpp_submit: the part goes
 * upstream as this one part (the same concatenation header and data coding), never re-split.
 * The decoded text of the part is the campaign's text.
 */
export interface CustomerCut {
  dataCoding: CustomerDataCoding;
  concat: ConcatHeader | null;
  /** SMPP 3.4 §5.2.17 registered_delivery as sent (bits 0-1: 0 none, 1 final, 2 failure only). */
  registeredDelivery: number;
  sourceAddrTon: number;
  sourceAddrNpi: number;
}

/** Which receipts a customer asked for (registered_delivery bits 0-1). */
export function wantsReceipt(registeredDelivery: number, delivered: boolean): boolean {
  const asked = registeredDelivery & 0x03;
  return asked === 1 || (asked === 2 && !delivered);
}

