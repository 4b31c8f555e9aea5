import { describe, expect, it } from 'vitest';
import { nextRecipientStatus, type PartView } from '../../src/engine/recipient-status.js';

const pending = { status: 'pending' as const, lastStatus: null };
const part = (partNumber: number, state: PartView['state'], lastStatus: string | null = null, finalAt: number | null = null): PartView => ({
  partNumber,
  state,
  lastStatus,
  finalAt,
});

describe('nextRecipientStatus', () => {
  it('is delivered when every part is delivered', () => {
    const parts = [part(1, 'delivered', 'DELIVRD', 10), part(2, 'delivered', 'DELIVRD', 20)];
    expect(nextRecipientStatus(pending, parts, { status: 'DELIVRD', final: true })).toEqual({ status: 'delivered', lastStatus: 'DELIVRD' });
  });

  it('stays pending while one part of a multi-part message is still out', () => {
    const parts = [part(1, 'delivered', 'DELIVRD', 10), part(2, 'submitted')];
    expect(nextRecipientStatus(pending, parts, { status: 'DELIVRD', final: true })).toBeUndefined();
  });

  it('is undelivered with the status of one UNDELIV part even if the others are delivered', () => {
    const parts = [part(1, 'delivered', 'DELIVRD', 10), part(2, 'undelivered', 'UNDELIV', 20), part(3, 'submitted')];
    expect(nextRecipientStatus(pending, parts, { status: 'UNDELIV', final: true })).toEqual({ status: 'undelivered', lastStatus: 'UNDELIV' });
  });

  it('takes the first part to become final among several failures', () => {
    const parts = [part(1, 'undelivered', 'EXPIRED', 30), part(2, 'undelivered', 'REJECTD', 20)];
    expect(nextRecipientStatus(pending, parts, { status: 'EXPIRED', final: true })).toEqual({ status: 'undelivered', lastStatus: 'REJECTD' });
  });

  it('never changes a delivered or undelivered recipient', () => {
    const parts = [part(1, 'undelivered', 'UNDELIV', 10)];
    expect(nextRecipientStatus({ status: 'delivered', lastStatus: 'DELIVRD' }, parts, { status: 'UNDELIV', final: true })).toBeUndefined();
    expect(nextRecipientStatus({ status: 'undelivered', lastStatus: 'UNDELIV' }, parts, { status: 'DELIVRD', final: true })).toBeUndefined();
  });

  it('reports a new intermediate status once while pending', () => {
    const parts = [part(1, 'submitted', 'ENROUTE')];
    expect(nextRecipientStatus(pending, parts, { status: 'ENROUTE', final: false })).toEqual({ status: 'pending', lastStatus: 'ENROUTE' });
    expect(nextRecipientStatus({ status: 'pending', lastStatus: 'ENROUTE' }, parts, { status: 'ENROUTE', final: false })).toBeUndefined();
  });
});
