/**
 * What smsgate sends back to an SMPP customer (an ESME bound to its SMPP server): a deliver_sm's
 * fields as stored in smpp_deliveries until the customer acknowledges it. Pure and inner: the
 * engine (receipts) and the inbound service (mobile-originated messages) write these rows in their
 * own commits; the SMPP server (src/smpp-server/) sends them.
 */

import type { MessageState } from '../receipts/status.js';

export { MESSAGE_STATE, type MessageState } from '../receipts/status.js';

/** A deliver_sm to send (SMPP 3.4 §4.6.1), stored as JSON in smpp_deliveries.deliver_sm. */
export interface DeliverSmFields {
  sourceAddrTon: number;
  sourceAddrNpi: number;
  sourceAddr: string;
  destAddrTon: number;
  destAddrNpi: number;
  destinationAddr: string;
  /** 0x04 for a delivery receipt (SMPP 3.4 §5.2.12); 0x00 or 0x40 (UDHI) for an inbound message. */
  esmClass: number;
  dataCoding: number;
  /** The short_message octets, hex (a UDH first when esmClass has 0x40). */
  shortMessageHex: string;
  /** TLV 0x001E, receipts only: the message id smsgate gave in submit_sm_resp. */
  receiptedMessageId?: string;
  /** TLV 0x0427, receipts only. */
  messageState?: MessageState;
}

/** A deliver_sm as the JSON smpp_deliveries.deliver_sm holds (the store keeps the text, never looks inside). */
export function serializeDeliverSm(fields: DeliverSmFields): string {
  return JSON.stringify(fields);
}

/** smpp_deliveries.deliver_sm back as the fields serializeDeliverSm wrote. */
export function parseDeliverSm(json: string): DeliverSmFields {
  return JSON.parse(json) as DeliverSmFields;
}

