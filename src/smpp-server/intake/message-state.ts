/**
 * query_sm's answer for a stored submit (SMPP 3.4 §4.8.2): its message_state from its recipient
 * and parts, when it became final as an SMPP absolute time, and the network error code. Pure.
 */
import { receiptOutcomeOf } from '../../smpp-customer/receipt-deliver-sm.js';
import type { IntakeMessage } from '../../store/smpp-intake-port.js';
import { MESSAGE_STATE, type MessageState, type QueryOutcome } from '../contracts.js';

/**
 * A final recipient's state and status as message_state (SMPP 3.4 §5.2.28): the same mapping as
 * the receipt the customer gets (receiptOutcomeOf, given the engine's delivered verdict), so
 * query_sm and the receipt never disagree.
 */
function finalState(delivered: boolean, lastStatus: string | null): MessageState {
  return receiptOutcomeOf(delivered, lastStatus ?? '', null).messageState;
}

const two = (n: number): string => String(n).padStart(2, '0');

/**
 * SMPP 3.4 §7.1.1 absolute time "YYMMDDhhmmsstnnp" in UTC: tenths 0, offset 00 quarter hours, '+'.
 */
export function smppAbsoluteTime(ms: number): string {
  const d = new Date(ms);
  return `${two(d.getUTCFullYear() % 100)}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}${two(d.getUTCSeconds())}000+`;
}

/** query_sm's error_code is one octet: a receipt's numeric err (e.g. '000', '27'), else 0. */
function errorCodeOf(code: string | null): number {
  if (code === null || !/^[0-9]{1,3}$/.test(code.trim())) return 0;
  const value = Number(code.trim());
  return value <= 0xff ? value : 0;
}

export function queryOutcomeOf(message: IntakeMessage): QueryOutcome {
  if (message.recipientStatus === 'pending') return { kind: 'found', messageState: MESSAGE_STATE.ENROUTE, finalDate: '', errorCode: 0 };
  const delivered = message.recipientStatus === 'delivered';
  const finalAt = message.parts.reduce<number | null>((latest, p) => (p.finalAt !== null && (latest === null || p.finalAt > latest) ? p.finalAt : latest), null);
  const failed = message.parts.find((p) => p.state === 'undelivered');
  return {
    kind: 'found',
    messageState: finalState(delivered, message.recipientLastStatus),
    finalDate: finalAt === null ? '' : smppAbsoluteTime(finalAt),
    errorCode: delivered ? 0 : errorCodeOf(failed?.lastErrorCode ?? null),
  };
}
