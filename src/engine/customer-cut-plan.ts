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
import { parseCustomerCut } from '../smpp-customer/customer-cut.js';
import { airEncoding, cutHeaderOctets, cutPartRefusal, type CutRefusal } from '../transports/customer-cut.js';
import type { ConcatHeader, OutboundCustomerCut } from '../transports/transport.js';

export type CustomerCutPlan =
  /** Planned by the SMS core like any text (no header of the customer's). */
  | { kind: 'as-text' }
  /** One segment, sent as the customer cut it. */
  | { kind: 'cut'; encoding: Encoding; segment: string; cut: OutboundCustomerCut & { concat: ConcatHeader } }
  /** One segment that fails permanently with `refusal.status`. */
  | { kind: 'refused'; segment: string; refusal: CutRefusal };

/** How a campaign with this smpp_submit (null: an HTTP campaign) and decoded text is planned. */
export function planCustomerCut(smppSubmit: string | null | undefined, text: string): CustomerCutPlan {
  if (smppSubmit === null || smppSubmit === undefined) return { kind: 'as-text' };
  const parsed = parseCustomerCut(smppSubmit);
  if (!parsed.ok) return { kind: 'refused', segment: text, refusal: { status: 'CUSTOMER_CUT_INVALID', detail: parsed.detail } };
  const { cut } = parsed;
  const { concat } = cut;
  if (concat === null) return { kind: 'as-text' };
  const refusal = cutPartRefusal(text, cut.dataCoding, cutHeaderOctets(concat));
  if (refusal !== null) return { kind: 'refused', segment: text, refusal };
  return { kind: 'cut', encoding: airEncoding(cut.dataCoding, text), segment: text, cut: { dataCoding: cut.dataCoding, concat } };
}
