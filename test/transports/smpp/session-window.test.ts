/**
 * SessionWindow: the one owner of an SMPP session's slots, deadlines and fail-all-on-close
 *. Deadlines are stepped with an injected clock, never waited for.
 */
import smpp from 'smpp';
import type { PDU } from 'smpp';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/common/errors.js';
import { SessionWindow, type RequestResult } from '../../../src/transports/smpp/session-window.js';

const RESPONSE_TIMEOUT_MS = 10_000;

let windows: SessionWindow[] = [];
afterEach(() => {
  for (const window of windows) window.failAll('TRANSPORT_STOPPED');
  windows = [];
});

function rig(slots: number) {
  let nowMs = 1_000_000;
  let slotsFreed = 0;
  const window = new SessionWindow({ slots, responseTimeoutMs: RESPONSE_TIMEOUT_MS, onSlotFreed: () => slotsFreed++, now: () => nowMs });
  windows.push(window);
  const results = new Map<number, RequestResult>();
  const record = (sequence: number) => (result: RequestResult) => {
    if (results.has(sequence)) throw new Error(`second result for ${sequence}`);
    results.set(sequence, result);
  };
  return {
    window,
    results,
    record,
    freed: () => slotsFreed,
    advance(ms: number) {
      nowMs += ms;
      window.expireOverdue(nowMs);
    },
  };
}

function submitResp(sequenceNumber: number): PDU {
  return new smpp.PDU('submit_sm_resp', { sequence_number: sequenceNumber, message_id: 'id' });
}

describe('SessionWindow', () => {
  it('gives out exactly `slots` submit slots; a response frees one', () => {
    const r = rig(2);
    expect(r.window.reserve()).toBe(true);
    expect(r.window.reserve()).toBe(true);
    expect(r.window.reserve()).toBe(false);
    r.window.add(1, r.record(1), true);
    r.window.add(2, r.record(2), true);
    expect(r.window.slotsUsed).toBe(2);
    expect(r.window.complete(submitResp(1))).toBe(true);
    expect(r.results.get(1)).toMatchObject({ kind: 'response' });
    expect(r.window.slotsUsed).toBe(1);
    expect(r.freed()).toBe(1);
    expect(r.window.hasFreeSlot).toBe(true);
  });

  it('a request without a slot (enquire_link) is tracked but takes none', () => {
    const r = rig(1);
    r.window.add(7, r.record(7), false);
    expect(r.window.pendingCount).toBe(1);
    expect(r.window.slotsUsed).toBe(0);
    expect(r.window.reserve()).toBe(true);
  });

  it('an unreserved slot is given back; an unknown response completes nothing', () => {
    const r = rig(1);
    expect(r.window.reserve()).toBe(true);
    r.window.unreserve();
    expect(r.window.slotsUsed).toBe(0);
    expect(r.window.complete(submitResp(99))).toBe(false);
  });

  it('fails a request with RESPONSE_TIMEOUT once responseTimeoutMs has passed, not before, and frees its slot', () => {
    const r = rig(1);
    r.window.reserve();
    r.window.add(1, r.record(1), true);
    r.advance(RESPONSE_TIMEOUT_MS - 1);
    expect(r.results.size).toBe(0);
    r.advance(1);
    const result = r.results.get(1);
    expect(result).toMatchObject({ kind: 'failed', code: 'RESPONSE_TIMEOUT' });
    expect(result?.kind === 'failed' && result.error).toBeInstanceOf(GatewayError);
    expect(r.window.slotsUsed).toBe(0);
    expect(r.window.complete(submitResp(1))).toBe(false);
  });

  it('on close fails every pending request with a coded GatewayError, and anything added later at once', () => {
    const r = rig(3);
    r.window.reserve();
    r.window.add(1, r.record(1), true);
    r.window.reserve();
    r.window.add(2, r.record(2), true);
    r.window.add(3, r.record(3), false);
    r.window.failAll('CONNECTION_LOST');
    expect([...r.results.keys()].sort()).toEqual([1, 2, 3]);
    for (const result of r.results.values()) {
      expect(result.kind === 'failed' && result.error.code).toBe('CONNECTION_LOST');
      expect(result.kind === 'failed' && result.error.retryable).toBe(true);
    }
    expect(r.window.slotsUsed).toBe(0);
    expect(r.window.reserve()).toBe(false);
    r.window.add(4, r.record(4), false);
    expect(r.results.get(4)).toMatchObject({ kind: 'failed', code: 'CONNECTION_LOST' });
    expect(r.window.pendingCount).toBe(0);
  });
});
