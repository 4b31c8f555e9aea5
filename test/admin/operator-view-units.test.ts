/**
 * The operator view's pure parts on their own: readiness per route over the transports a route
 * may use, the outcome breakdown, part counts (throttled told apart), rates per minute for modems,
 * and the webhook health keeping the real cause behind an open breaker.
 */
import { describe, expect, it } from 'vitest';
import { formatOutcomes, outcomeBreakdown } from '../../src/admin/campaign-outcomes.js';
import { routeReadiness, routeReason, whyNotUp, type TransportAvailability } from '../../src/admin/readiness.js';
import { rateText } from '../../src/admin/status-page.js';
import { countedAs, TransportActivity } from '../../src/admin/transport-activity.js';
import { WebhookHealth } from '../../src/admin/webhook-health.js';

describe('readiness per route', () => {
  const up = (name: string): TransportAvailability => ({ name, state: 'bound', up: true });
  const down = (name: string, reason: string): TransportAvailability => ({ name, state: 'down', up: false, why: whyNotUp({ state: 'down', reason }) ?? '' });

  it('says why a transport is not up, by its state', () => {
    expect(whyNotUp({ state: 'bound' })).toBeNull();
    expect(whyNotUp({ state: 'binding' })).toBe('not bound (binding)');
    expect(whyNotUp({ state: 'down', reason: 'no modem ready' })).toBe('not bound (down: no modem ready)');
  });

  it('finds a route unservable when its transport is down, whatever the other routes have', () => {
    const routes = routeReadiness({
      transports: [down('carrier', 'ECONNREFUSED'), up('sim')],
      routes: [{ prefix: '353', transport: 'carrier' }, { prefix: '', transport: 'sim' }, { prefix: '44', transport: 'gone' }],
    });
    expect(routes.map((r) => [r.prefix, r.servable])).toEqual([['353', false], ['', true], ['44', false]]);
    expect(routes.filter((r) => !r.servable).map(routeReason)).toEqual([
      'route "353" has no transport up to carry it: transport carrier: not bound (down: ECONNREFUSED)',
      'route "44" has no transport up to carry it: transport gone: not configured',
    ]);
  });
});

describe('the outcome breakdown', () => {
  it('splits undelivered recipients into receipt statuses and submit codes, largest first, and adds up to every recipient', () => {
    const o = outcomeBreakdown({ delivered: 7, pending: 2 }, [
      { lastStatus: 'UNDELIV', rejected: false, recipients: 1 },
      { lastStatus: 'EXPIRED', rejected: false, recipients: 3 },
      { lastStatus: null, rejected: false, recipients: 1 },
      { lastStatus: 'ESME_RINVDSTADR', rejected: true, recipients: 2 },
    ]);
    expect(o).toEqual({
      delivered: 7,
      undelivered: { total: 5, byStatus: [{ name: 'EXPIRED', recipients: 3 }, { name: 'UNDELIV', recipients: 1 }, { name: 'UNKNOWN', recipients: 1 }] },
      rejected: { total: 2, byCode: [{ name: 'ESME_RINVDSTADR', recipients: 2 }] },
      pending: 2,
    });
    expect(formatOutcomes(o)).toBe('7 delivered, 5 undelivered (EXPIRED 3, UNDELIV 1, UNKNOWN 1), 2 rejected (ESME_RINVDSTADR 2), 2 pending');
    expect(formatOutcomes(outcomeBreakdown({ delivered: 0, pending: 0 }, []))).toBe('0 delivered, 0 undelivered, 0 rejected, 0 pending');
  });
});

describe('part counts and rates', () => {
  it('counts a slow-down status as throttled, a permanent failure as rejected, anything else that failed as failed', () => {
    expect(countedAs('failed-temporary', { part: 1, kind: 'temporary', status: 'ESME_RTHROTTLED' })).toBe('throttled');
    expect(countedAs('failed-temporary', { part: 1, kind: 'temporary', status: 'ESME_RMSGQFUL' })).toBe('throttled');
    expect(countedAs('failed-temporary', { part: 1, kind: 'temporary', status: 'RESPONSE_TIMEOUT' })).toBe('failed');
    expect(countedAs('failed-temporary', { part: 1, kind: 'not-sent', reason: 'TRANSPORT_DOWN' })).toBe('failed');
    expect(countedAs('failed-permanent', { part: 1, kind: 'permanent', status: 'ESME_RINVDSTADR' })).toBe('rejected');
    expect(countedAs('accepted', { part: 1, kind: 'accepted', messageId: 'm' })).toBe('accepted');
    expect(countedAs('failed-temporary', undefined)).toBe('failed');
  });

  it('gives modems their rate per minute over the last whole minute, carriers per second', () => {
    let nowMs = 1_000_000;
    const activity = new TransportActivity(() => nowMs);
    for (let i = 0; i < 12; i++) {
      activity.submitted('modems', 1);
      nowMs += 5_000;
    }
    expect(activity.partsLastMinute('modems')).toBe(12);
    expect(rateText({ type: 'modem', ratePerSecond: 0.2, maxPerSecond: 0.5, ratePerMinute: 12, maxPerMinute: 30 })).toBe('12 / 30 per min');
    expect(rateText({ type: 'smpp', ratePerSecond: 80, maxPerSecond: 100, ratePerMinute: 4_800, maxPerMinute: 6_000 })).toBe('80 / 100 per s');
    nowMs += 61_000;
    expect(activity.partsLastMinute('modems')).toBe(0);
  });
});

describe('webhook health', () => {
  it('keeps the cause behind an open breaker and reads it half-open once its window has passed', () => {
    let nowMs = 10_000;
    const health = new WebhookHealth(() => nowMs);
    health.attempted({ clientId: 3, error: 'ECONNREFUSED', failedFast: false, breaker: 'closed', halfOpensAtMs: null });
    nowMs += 1_000;
    health.attempted({ clientId: 3, error: 'ECONNREFUSED', failedFast: false, breaker: 'open', halfOpensAtMs: nowMs + 30_000 });
    nowMs += 2_000;
    health.attempted({ clientId: 3, error: null, failedFast: true, breaker: 'open', halfOpensAtMs: 41_000 });
    expect(health.of(3)).toEqual({ breaker: 'open', lastError: 'ECONNREFUSED', lastErrorAtMs: 11_000, lastAttemptAtMs: 13_000 });
    nowMs = 41_000;
    expect(health.of(3)?.breaker).toBe('half-open');
    expect(health.of(4)).toBeUndefined();
  });
});
