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


/** A stored cut read back, or why it cannot be (the engine fails such a part with CUSTOMER_CUT_INVALID). */
export type ParsedCustomerCut = { ok: true; cut: CustomerCut } | { ok: false; detail: string };

const SCHEMES: readonly ConcatHeader['scheme'][] = ['udh8', 'udh16', 'sar'];

function isInteger(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** The concatenation header as stored, or null when it is not one (TS 23.040 §9.2.3.24.1: total 1..255, sequence 1..total). */
function parseConcat(value: unknown): ConcatHeader | null {
  if (typeof value !== 'object' || value === null) return null;
  const { scheme, reference, total, sequence } = value as Record<string, unknown>;
  if (!SCHEMES.includes(scheme as ConcatHeader['scheme'])) return null;
  const maxReference = scheme === 'udh8' ? 0xff : 0xffff;
  if (!isInteger(reference, 0, maxReference) || !isInteger(total, 1, 255) || !isInteger(sequence, 1, total)) return null;
  return { scheme: scheme as ConcatHeader['scheme'], reference, total, sequence };
}

/**
 * The one reader of campaigns.smpp_submit: every field checked (data_coding 0, 3 or 8; a valid
 * concatenation header or none; registered_delivery, source_addr_ton and source_addr_npi one
 * octet each, SMPP 3.4 §5.2.5, §5.2.6, §5.2.17). The planner and the receipt writer both read
 * the cut through it, so a row one of them takes the other takes too.
 */
export function parseCustomerCut(json: string): ParsedCustomerCut {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return { ok: false, detail: 'campaigns.smpp_submit is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null) return { ok: false, detail: 'campaigns.smpp_submit is not an object' };
  const { dataCoding, concat, registeredDelivery, sourceAddrTon, sourceAddrNpi } = parsed as Record<string, unknown>;
  if (dataCoding !== 0 && dataCoding !== 3 && dataCoding !== 8) return { ok: false, detail: `data_coding ${String(dataCoding)} is not 0, 3 or 8` };
  const octets = { registeredDelivery, sourceAddrTon, sourceAddrNpi };
  for (const [name, value] of Object.entries(octets)) {
    if (!isInteger(value, 0, 0xff)) return { ok: false, detail: `${name} ${JSON.stringify(value) ?? 'undefined'} is not an octet` };
  }
  const header = concat === null || concat === undefined ? null : parseConcat(concat);
  if (header === null && concat !== null && concat !== undefined) {
    return { ok: false, detail: `concatenation header ${JSON.stringify(concat)} is not a valid one` };
  }
  return {
    ok: true,
    cut: { dataCoding, concat: header, registeredDelivery: registeredDelivery as number, sourceAddrTon: sourceAddrTon as number, sourceAddrNpi: sourceAddrNpi as number },
  };
}
