/**
 * How a campaign stored from an SMPP customer's submit_sm is planned (campaigns.smpp_submit, the
 * CustomerCut JSON of src/smpp-server/contracts.ts):
 *
 * - with a concatenation header (UDH 8/16-bit or SAR TLVs) the customer cut the message itself:
 *   its part is planned as exactly one segment, never re-split, in the customer's data coding
 *   (0 GSM-7, 8 UCS-2, 3 Latin-1 where the transport can send it, else GSM-7 when every character
 *   is in GSM-7 and UCS-2 otherwise: airEncoding), and its message carries the cut
 *   (OutboundMessage.customerCut);
 * - without one (message_payload, or a short message that needs no header) the SMS core plans the
 *   text as any campaign's (the caller's planMessage): one part or several, GSM-7 or UCS-2 as the
 *   text needs, so Latin-1 text too goes as GSM-7 when it can and UCS-2 otherwise.
 *
 * The engine's guard: a cut part that does not fit one part in its data coding beside its header
 * (or has a character the coding lacks) is planned as one segment that fails permanently with the
 * refusal's status (CUSTOMER_PART_TOO_LONG, ...). The SMPP server refuses such submits up front;
 * this keeps a row that slipped past it from going out wrong.
 */
import type { Encoding } from '../sms/index.js';
import { airEncoding, cutHeaderOctets, cutPartRefusal, type CutRefusal } from '../transports/customer-cut.js';
import type { ConcatHeader, OutboundCustomerCut } from '../transports/transport.js';

export type CustomerCutPlan =
  /** Planned by the SMS core like any text (no header of the customer's). */
  | { kind: 'as-text' }
  /** One segment, sent as the customer cut it. */
  | { kind: 'cut'; encoding: Encoding; segment: string; cut: OutboundCustomerCut & { concat: ConcatHeader } }
  /** One segment that fails permanently with `refusal.status`. */
  | { kind: 'refused'; segment: string; refusal: CutRefusal };

const SCHEMES: readonly ConcatHeader['scheme'][] = ['udh8', 'udh16', 'sar'];

function isInteger(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** The concatenation header as stored, or null when it is not one (TS 23.040 §9.2.3.24.1: total 1..255, sequence 1..total). */
function readConcat(value: unknown): ConcatHeader | null {
  if (typeof value !== 'object' || value === null) return null;
  const { scheme, reference, total, sequence } = value as Record<string, unknown>;
  if (!SCHEMES.includes(scheme as ConcatHeader['scheme'])) return null;
  const maxReference = scheme === 'udh8' ? 0xff : 0xffff;
  if (!isInteger(reference, 0, maxReference) || !isInteger(total, 1, 255) || !isInteger(sequence, 1, total)) return null;
  return { scheme: scheme as ConcatHeader['scheme'], reference, total, sequence };
}

/** The data coding and header of a stored CustomerCut, or why it cannot be read. */
export function readCustomerCut(json: string): OutboundCustomerCut | CutRefusal {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return { status: 'CUSTOMER_CUT_INVALID', detail: 'campaigns.smpp_submit is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null) return { status: 'CUSTOMER_CUT_INVALID', detail: 'campaigns.smpp_submit is not an object' };
  const { dataCoding, concat } = parsed as Record<string, unknown>;
  if (dataCoding !== 0 && dataCoding !== 3 && dataCoding !== 8) {
    return { status: 'CUSTOMER_CUT_INVALID', detail: `data_coding ${String(dataCoding)} is not 0, 3 or 8` };
  }
  if (concat === null || concat === undefined) return { dataCoding, concat: null };
  const header = readConcat(concat);
  if (header === null) return { status: 'CUSTOMER_CUT_INVALID', detail: `concatenation header ${JSON.stringify(concat)} is not a valid one` };
  return { dataCoding, concat: header };
}

/** How a campaign with this smpp_submit (null: an HTTP campaign) and decoded text is planned. */
export function planCustomerCut(smppSubmit: string | null | undefined, text: string): CustomerCutPlan {
  if (smppSubmit === null || smppSubmit === undefined) return { kind: 'as-text' };
  const cut = readCustomerCut(smppSubmit);
  if ('status' in cut) return { kind: 'refused', segment: text, refusal: cut };
  const { concat } = cut;
  if (concat === null) return { kind: 'as-text' };
  const refusal = cutPartRefusal(text, cut.dataCoding, cutHeaderOctets(concat.scheme));
  if (refusal !== null) return { kind: 'refused', segment: text, refusal };
  return { kind: 'cut', encoding: airEncoding(cut.dataCoding, text), segment: text, cut: { dataCoding: cut.dataCoding, concat } };
}
