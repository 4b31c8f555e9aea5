/**
 * Per-part states aggregate into one recipient status (SPEC "Campaign Summary"):
 * - delivered when every part is delivered;
 * - else undelivered with the status of the first part (by when it became final) that ended
 *   undelivered;
 * - else pending. While pending, a non-final receipt status (ENROUTE, ACCEPTD...) becomes the
 *   recipient's last status: SPEC Events §1 lets a webhook report "still processing".
 * A recipient that is delivered or undelivered never changes again, so duplicate and out-of-order
 * receipts change nothing.
 */
import type { PartState, RecipientStatus } from '../store/entities.js';

export interface PartView {
  partNumber: number;
  state: PartState;
  lastStatus: string | null;
  finalAt: number | null;
}

export interface RecipientView {
  status: RecipientStatus;
  lastStatus: string | null;
}

/** What just happened to one of the parts: a receipt or a submit outcome with its status. */
export interface StatusTrigger {
  status: string;
  final: boolean;
}

/** The recipient's next status, or undefined when nothing changes (no webhook). */
export function nextRecipientStatus(current: RecipientView, parts: readonly PartView[], trigger: StatusTrigger): RecipientView | undefined {
  if (current.status !== 'pending' || parts.length === 0) return undefined;
  if (parts.every((p) => p.state === 'delivered')) {
    const status = trigger.final ? trigger.status : lastDelivered(parts).lastStatus ?? trigger.status;
    return { status: 'delivered', lastStatus: status };
  }
  const failed = parts
    .filter((p) => p.state === 'undelivered')
    .sort((a, b) => (a.finalAt ?? 0) - (b.finalAt ?? 0) || a.partNumber - b.partNumber)[0];
  if (failed !== undefined) return { status: 'undelivered', lastStatus: failed.lastStatus ?? trigger.status };
  if (!trigger.final && trigger.status !== current.lastStatus) return { status: 'pending', lastStatus: trigger.status };
  return undefined;
}

function lastDelivered(parts: readonly PartView[]): PartView {
  return parts.reduce((latest, p) => ((p.finalAt ?? 0) >= (latest.finalAt ?? 0) ? p : latest));
}
