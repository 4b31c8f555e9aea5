/**
 * The Delivery Receipt webhook body (SPEC "Delivery Receipt"): exactly {To, From, Status,
 * ClientReference} in that order, PascalCase, ClientReference null when none was supplied.
 * It is serialised once, when the event is queued; those bytes are stored, signed and sent, because
 * re-serialised JSON may break a receiver's signature check (SPEC "Authentication" point 7).
 */
import { GatewayError } from '../common/errors.js';

export type { DeliveryReceiptEvent } from '../store/dispatch-steps.js';
import type { DeliveryReceiptEvent } from '../store/dispatch-steps.js';

/** SPEC "Limits": Status and ClientReference are at most 30 characters each. */
export const MAX_WEBHOOK_STATUS_CHARS = 30;
export const MAX_CLIENT_REFERENCE_CHARS = 30;

function charCount(value: string): number {
  return Array.from(value).length;
}

/**
 * The exact JSON text of one receipt. Throws WEBHOOK_FIELD_INVALID rather than cut a field: the
 * receipt core fits Status to 30 characters and logs it; a longer value here is a caller's bug.
 */
export function serializeDeliveryReceipt(ev: Pick<DeliveryReceiptEvent, 'to' | 'from' | 'status' | 'clientReference'>): string {
  if (ev.status.length === 0 || charCount(ev.status) > MAX_WEBHOOK_STATUS_CHARS) {
    throw new GatewayError('WEBHOOK_FIELD_INVALID', `Status must be 1 to ${MAX_WEBHOOK_STATUS_CHARS} characters`, {
      details: { field: 'Status', chars: charCount(ev.status) },
    });
  }
  if (ev.clientReference !== null && charCount(ev.clientReference) > MAX_CLIENT_REFERENCE_CHARS) {
    throw new GatewayError('WEBHOOK_FIELD_INVALID', `ClientReference must be at most ${MAX_CLIENT_REFERENCE_CHARS} characters`, {
      details: { field: 'ClientReference', chars: charCount(ev.clientReference) },
    });
  }
  // Object literal key order is insertion order, so JSON.stringify keeps To, From, Status, ClientReference.
  return JSON.stringify({ To: ev.to, From: ev.from, Status: ev.status, ClientReference: ev.clientReference });
}
