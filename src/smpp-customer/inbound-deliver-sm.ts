/**
 * A mobile-originated message routed to a client that has an SMPP account, as the deliver_sm rows
 * smsgate stores for that account (store and forward, like receipts), and the one decision of
 * whether it goes that way or to the client's inbound webhook. Pure: the store reads the facts and
 * writes what this returns, in the transaction that stores the message.
 *
 * The text is carried whole and unchanged: GSM 03.38 (data_coding 0, unpacked septets, as the
 * server reads a customer's data_coding 0) when the default alphabet holds every character, else
 * UCS-2 (data_coding 8); a text longer than one part is cut as src/sms cuts any message (153 septets
 * or 67 UCS-2 units, an escape pair or a surrogate pair never split) and each part carries an 8-bit
 * concatenation UDH (3GPP TS 23.040 §9.2.3.24.1) with esm_class 0x40 (UDHI, SMPP 3.4 §5.2.12).
 */
import { encodeParts } from '../sms/encode-parts.js';
import { chooseLayout, splitSegments } from '../sms/message-layout.js';
import type { MessagePlan } from '../sms/message-plan.js';
import type { CustomerDeliveryWrite, SmppAccountPresence } from '../store/smpp-delivery-port.js';
import { ESM_UDHI } from '../transports/smpp/esm-class.js';
import { SESSION_STALE_MS } from './session-liveness.js';
import { serializeDeliverSm, type DeliverSmFields } from './deliver-sm.js';


export interface InboundForCustomer {
  /** The message's public id: the rows' key, so its parts go out in order. */
  publicId: string;
  /** The handset that sent it. */
  from: string;
  /** The address it was sent to (the client's routed number). */
  to: string;
  text: string;
}

/**
 * The account an inbound message goes to over SMPP, or null for the client's inbound webhook: the
 * first (lowest id) account with a receiver bound anywhere in the cluster, else the first with
 * rows still waiting (the customer is away but takes its messages over SMPP: they wait with the
 * rest, in order). A client with no SMPP account, or none bound and none waiting, keeps its webhook.
 */
export function smppAccountForInbound(accounts: readonly SmppAccountPresence[], nowMs: number): number | null {
  const sorted = [...accounts].sort((a, b) => a.accountId - b.accountId);
  const bound = (a: SmppAccountPresence): boolean => a.receiverHeartbeatAtMs !== null && a.receiverHeartbeatAtMs > nowMs - SESSION_STALE_MS;
  return (sorted.find(bound) ?? sorted.find((a) => a.waiting > 0))?.accountId ?? null;
}

/**
 * The deliver_sm of each part, in order. `reference` is the 8-bit concatenation reference the parts
 * share (the caller derives it from the message id).
 */
export function inboundDeliverSms(message: InboundForCustomer, reference: number): DeliverSmFields[] {
  const { layout, count } = chooseLayout(message.text);
  const plan: MessagePlan = { encoding: layout.encoding, units: count.units, parts: count.parts, text: message.text, segments: splitSegments(message.text, layout, count.units) };
  const international = /^\d{8,15}$/;
  return encodeParts(plan, { reference, referenceBits: 8 }).map((part): DeliverSmFields => {
    const octets = part.udh === null ? Buffer.from(part.payload) : Buffer.concat([part.udh, part.payload]);
    return {
      // The handset's number is international after the inbound service normalised it (E.164 digits).
      sourceAddrTon: international.test(message.from) ? 1 : 0,
      sourceAddrNpi: 1,
      sourceAddr: message.from,
      destAddrTon: international.test(message.to) ? 1 : 0,
      destAddrNpi: 1,
      destinationAddr: message.to,
      esmClass: part.udh === null ? 0 : ESM_UDHI,
      dataCoding: plan.encoding === 'GSM-7' ? 0 : 8,
      shortMessageHex: octets.toString('hex'),
    };
  });
}

/** The message's concatenation reference: a byte of its id, so every part of it carries the same one. */
export function inboundReference(publicId: string): number {
  let hash = 0;
  for (let i = 0; i < publicId.length; i++) hash = (hash * 31 + publicId.charCodeAt(i)) >>> 0;
  return hash & 0xff;
}

/**
 * The decision and the rows, once for both stores: the rows to write for the message (one per
 * part, keyed by its id so they go in order) when it goes over SMPP; empty for the webhook.
 */
export function inboundCustomerDeliveries(
  message: InboundForCustomer, accounts: readonly SmppAccountPresence[], nowMs: number, retentionMs: number,
): CustomerDeliveryWrite[] {
  const accountId = smppAccountForInbound(accounts, nowMs);
  if (accountId === null) return [];
  return inboundDeliverSms(message, inboundReference(message.publicId)).map((deliverSm) => ({
    accountId, kind: 'inbound', messageId: message.publicId, deliverSm: serializeDeliverSm(deliverSm), createdAtMs: nowMs, expiresAtMs: nowMs + retentionMs,
  }));
}
