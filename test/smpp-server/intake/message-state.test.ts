/**
 * query_sm's answer from a stored message: message_state (SMPP 3.4 §5.2.28) from its recipient's
 * status, final_date as an SMPP absolute time (§7.1.1) in UTC, error_code from the receipt's err.
 */
import { describe, expect, it } from 'vitest';
import { MESSAGE_STATE } from '../../../src/smpp-server/contracts.js';
import { queryOutcomeOf, smppAbsoluteTime } from '../../../src/smpp-server/intake/message-state.js';
import type { IntakeMessage } from '../../../src/store/smpp-intake-port.js';

const DONE_MS = Date.UTC(2026, 10, 26, 9, 5, 7, 600);

function message(overrides: Partial<IntakeMessage>): IntakeMessage {
  return {
    clientId: 1, creditsReserved: 1, recipientId: 1, recipientStatus: 'pending', recipientLastStatus: null,
    parts: [{ id: 1, state: 'queued', lastStatus: null, lastErrorCode: null, finalAt: null, credits: 1 }], ...overrides,
  };
}

describe('queryOutcomeOf', () => {
  it('formats final_date as YYMMDDhhmmss000+ in UTC', () => {
    expect(smppAbsoluteTime(DONE_MS)).toBe('261126090507000+');
  });

  it('answers ENROUTE with no final date while the message is pending, whatever its parts are doing', () => {
    for (const state of ['queued', 'submitting', 'submitted'] as const) {
      expect(queryOutcomeOf(message({ parts: [{ id: 1, state, lastStatus: null, lastErrorCode: null, finalAt: null, credits: 1 }] })))
        .toEqual({ kind: 'found', messageState: MESSAGE_STATE.ENROUTE, finalDate: '', errorCode: 0 });
    }
  });

  it('answers DELIVERED, EXPIRED, DELETED, REJECTED and UNDELIVERABLE from the final status, with the receipt\'s error code', () => {
    const final = (status: 'delivered' | 'undelivered', lastStatus: string, lastErrorCode: string | null): unknown =>
      queryOutcomeOf(message({
        recipientStatus: status, recipientLastStatus: lastStatus,
        parts: [{ id: 1, state: status, lastStatus, lastErrorCode, finalAt: DONE_MS, credits: 1 }],
      }));
    expect(final('delivered', 'DELIVRD', '000')).toEqual({ kind: 'found', messageState: MESSAGE_STATE.DELIVRD, finalDate: '261126090507000+', errorCode: 0 });
    expect(final('undelivered', 'EXPIRED', '027')).toEqual({ kind: 'found', messageState: MESSAGE_STATE.EXPIRED, finalDate: '261126090507000+', errorCode: 27 });
    expect(final('undelivered', 'DELETED', null)).toMatchObject({ messageState: MESSAGE_STATE.DELETED, errorCode: 0 });
    expect(final('undelivered', 'REJECTD', '11')).toMatchObject({ messageState: MESSAGE_STATE.REJECTD, errorCode: 11 });
    expect(final('undelivered', 'UNDELIV', '1024')).toMatchObject({ messageState: MESSAGE_STATE.UNDELIV, errorCode: 0 });
    expect(final('undelivered', 'NO_ROUTE', 'ESME_RINVDSTADR')).toMatchObject({ messageState: MESSAGE_STATE.UNDELIV, errorCode: 0 });
  });

  it('answers the message_state the customer\'s receipt carries for every final status', () => {
    const final = (lastStatus: string): unknown =>
      queryOutcomeOf(message({
        recipientStatus: 'undelivered', recipientLastStatus: lastStatus,
        parts: [{ id: 1, state: 'undelivered', lastStatus, lastErrorCode: null, finalAt: DONE_MS, credits: 1 }],
      }));
    // Long spellings, an upstream SMSC's permanent refusal and UNKNOWN: as the receipt's stat says them.
    expect(final('REJECTED')).toMatchObject({ messageState: MESSAGE_STATE.REJECTD });
    expect(final('ESME_RINVDSTADR')).toMatchObject({ messageState: MESSAGE_STATE.REJECTD });
    expect(final('ESME_RTHROTTLED')).toMatchObject({ messageState: MESSAGE_STATE.UNDELIV });
    expect(final('UNDELIVERABLE')).toMatchObject({ messageState: MESSAGE_STATE.UNDELIV });
    expect(final('UNKNOWN')).toMatchObject({ messageState: MESSAGE_STATE.UNKNOWN });
    // A recipient not delivered is not DELIVERED, whatever its last part's status.
    expect(final('DELIVRD')).toMatchObject({ messageState: MESSAGE_STATE.UNDELIV });
  });
});
