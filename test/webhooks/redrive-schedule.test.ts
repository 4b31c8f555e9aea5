import { describe, expect, it } from 'vitest';
import { RedriveSchedule } from '../../src/webhooks/index.js';

const A = { key: '1 http://a/', clientId: 1, url: 'http://a/' };
const B = { key: '2 http://b/', clientId: 2, url: 'http://b/' };
const WINDOW_MS = 30_000;

describe('RedriveSchedule (probe once per breaker window while an endpoint has dead letters)', () => {
  it('schedules a probe one window after the first dead letter, not pushed back by later ones', () => {
    const s = new RedriveSchedule(WINDOW_MS);
    expect(s.nextProbeAtMs()).toBe(Number.POSITIVE_INFINITY);
    s.deadLetter(A, 1_000);
    s.deadLetter(A, 5_000);
    expect(s.nextProbeAtMs()).toBe(31_000);
    expect(s.dueProbes(30_999)).toEqual([]);
    expect(s.dueProbes(31_000)).toEqual([A]);
  });

  it('keeps endpoints apart and reports the soonest probe', () => {
    const s = new RedriveSchedule(WINDOW_MS);
    s.deadLetter(B, 2_000);
    s.deadLetter(A, 1_000);
    expect(s.nextProbeAtMs()).toBe(31_000);
    expect(s.dueProbes(32_000)).toEqual([B, A]);
    s.reschedule(A.key, 61_000);
    expect(s.dueProbes(32_000)).toEqual([B]);
    expect(s.nextProbeAtMs()).toBe(32_000);
  });

  it('track() moves a probe earlier, never later (dead letters found at start are probed at once)', () => {
    const s = new RedriveSchedule(WINDOW_MS);
    s.deadLetter(A, 1_000);
    s.track(A, 500);
    expect(s.nextProbeAtMs()).toBe(500);
    s.track(A, 90_000);
    expect(s.nextProbeAtMs()).toBe(500);
  });

  it('a 2xx redrives an endpoint with dead letters, at most once per window', () => {
    const s = new RedriveSchedule(WINDOW_MS);
    expect(s.shouldRedriveOnAnswer(A.key, 0)).toBe(false);
    s.deadLetter(A, 0);
    expect(s.shouldRedriveOnAnswer(A.key, 10)).toBe(true);
    s.redriven(A.key, 10);
    expect(s.has(A.key)).toBe(false);
    expect(s.nextProbeAtMs()).toBe(Number.POSITIVE_INFINITY);
    // Another event dies soon after: the next 2xx within the window does not redrive it...
    s.deadLetter(A, 5_000);
    expect(s.shouldRedriveOnAnswer(A.key, 29_999)).toBe(false);
    // ...one a window after the last redrive does, and the probe is due by then anyway.
    expect(s.shouldRedriveOnAnswer(A.key, 30_010)).toBe(true);
    expect(s.dueProbes(35_000)).toEqual([A]);
  });

  it('forgets an endpoint with nothing left to redrive', () => {
    const s = new RedriveSchedule(WINDOW_MS);
    s.deadLetter(A, 0);
    s.forget(A.key);
    expect(s.size).toBe(0);
    expect(s.dueProbes(1e12)).toEqual([]);
  });
});

describe('RedriveSchedule with an open breaker', () => {
  it('probes when the breaker lets its trial through, if that is sooner than a window after the dead letter', () => {
    const s = new RedriveSchedule(WINDOW_MS);
    s.deadLetter(A, 14_000, 30_000);
    expect(s.nextProbeAtMs()).toBe(30_000);
    s.deadLetter(B, 14_000, 90_000);
    expect(s.dueProbes(44_000)).toEqual([A, B]);
  });
});
