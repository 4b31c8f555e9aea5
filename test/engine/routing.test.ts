/**
 * The route planner (src/engine/routing.ts), pure: which route a part takes (longest prefix among
 * the routes for its client, a client-specific route before a general one of the same prefix),
 * which of its transports (failover: the first usable; weighted: split by weight over the usable
 * ones), and when it waits for the route's window (in the window's time zone, across DST).
 */
import { describe, expect, it } from 'vitest';
import type { RouteConfig } from '../../src/config/types.js';
import { planRoute, RouteTable, type RouteChoice, type TransportConditions } from '../../src/engine/routing.js';

const NOW = Date.parse('2026-06-10T12:00:00Z');
const up = (...names: string[]): Map<string, { up: true }> => new Map(names.map((n) => [n, { up: true }]));
const part = (msisdn: string, client = 'acme', spreadKey = 1) => ({ msisdn, client, spreadKey });
const transportOf = (choice: RouteChoice): string | undefined => (choice.kind === 'no-route' ? undefined : choice.transport);

describe('route matching', () => {
  const table = new RouteTable([
    { prefix: '', transport: 'default' },
    { prefix: '353', transport: 'ireland' },
    { prefix: '35387', transport: 'ireland-87' },
    { prefix: '44', transport: 'uk' },
  ]);
  const conditions = up('default', 'ireland', 'ireland-87', 'uk');

  it.each([
    ['353871234567', 'ireland-87'],
    ['353861234567', 'ireland'],
    ['447700900123', 'uk'],
    ['12025550123', 'default'],
    ['3', 'default'],
  ])('routes %s to %s by the longest prefix', (msisdn, transport) => {
    expect(transportOf(planRoute(table, part(msisdn), conditions, NOW))).toBe(transport);
  });

  it('has no route when no prefix matches, or when none of the route\'s transports runs here', () => {
    expect(planRoute(new RouteTable([{ prefix: '44', transport: 'uk' }]), part('353871234567'), up('uk'), NOW)).toEqual({ kind: 'no-route', routed: undefined });
    expect(planRoute(new RouteTable([{ prefix: '', transport: 'uk' }]), part('353871234567'), up('other'), NOW)).toEqual({ kind: 'no-route', routed: 'uk' });
  });

  it('keeps the first listed route among equal prefixes', () => {
    expect(transportOf(planRoute(new RouteTable([{ prefix: '44', transport: 'a' }, { prefix: '44', transport: 'b' }]), part('447'), up('a', 'b'), NOW))).toBe('a');
  });

  it('gives a client-specific route precedence over a general one of the same prefix, and only to its clients', () => {
    const routes: RouteConfig[] = [
      { prefix: '353', transport: 'general' },
      { prefix: '353', clients: ['acme'], transport: 'acme-carrier' },
      { prefix: '35387', transport: 'general-87' },
    ];
    const table = new RouteTable(routes);
    const conditions = up('general', 'acme-carrier', 'general-87');
    expect(transportOf(planRoute(table, part('353861234567', 'acme'), conditions, NOW))).toBe('acme-carrier');
    expect(transportOf(planRoute(table, part('353861234567', 'globex'), conditions, NOW))).toBe('general');
    // The longest prefix still wins first: a longer general route beats a shorter client-specific one.
    expect(transportOf(planRoute(table, part('353871234567', 'acme'), conditions, NOW))).toBe('general-87');
  });
});

describe('failover', () => {
  const table = new RouteTable([{ prefix: '', transports: ['carrierA', 'carrierB', 'modems'], strategy: 'failover', failoverAfterMs: 10_000 }]);

  it('takes the first listed transport that is up', () => {
    expect(transportOf(planRoute(table, part('353871234567'), up('carrierA', 'carrierB', 'modems'), NOW))).toBe('carrierA');
  });

  it('keeps a transport down for less than failoverAfterMs, and passes over one down for longer', () => {
    const downFor = (ms: number): TransportConditions => new Map([['carrierA', { up: false, sinceMs: NOW - ms }], ['carrierB', { up: true }], ['modems', { up: true }]]);
    expect(transportOf(planRoute(table, part('353871234567'), downFor(9_999), NOW))).toBe('carrierA');
    expect(transportOf(planRoute(table, part('353871234567'), downFor(10_000), NOW))).toBe('carrierB');
    const bothDown: TransportConditions = new Map([['carrierA', { up: false, sinceMs: 0 }], ['carrierB', { up: false, sinceMs: 0 }], ['modems', { up: true }]]);
    expect(transportOf(planRoute(table, part('353871234567'), bothDown, NOW))).toBe('modems');
  });

  it('leaves parts on the first transport when every one is down (they wait for it)', () => {
    const allDown: TransportConditions = new Map(['carrierA', 'carrierB', 'modems'].map((n) => [n, { up: false, sinceMs: 0 }]));
    expect(transportOf(planRoute(table, part('353871234567'), allDown, NOW))).toBe('carrierA');
  });

  it('prefers another usable transport to the one a part just failed on', () => {
    expect(transportOf(planRoute(table, part('353871234567'), up('carrierA', 'carrierB', 'modems'), NOW, 'carrierA'))).toBe('carrierB');
    expect(transportOf(planRoute(table, part('353871234567'), up('carrierA'), NOW, 'carrierA'))).toBe('carrierA');
  });
});

describe('weighted', () => {
  const table = new RouteTable([{ prefix: '44', transports: [{ name: 'carrierA', weight: 70 }, { name: 'carrierB', weight: 30 }], strategy: 'weighted' }]);
  const split = (conditions: TransportConditions, parts: number, firstKey = 1): Map<string, number> => {
    const counts = new Map<string, number>();
    for (let key = firstKey; key < firstKey + parts; key++) {
      const transport = transportOf(planRoute(table, part('447700900123', 'acme', key), conditions, NOW)) ?? 'none';
      counts.set(transport, (counts.get(transport) ?? 0) + 1);
    }
    return counts;
  };

  it.each([1, 123_457])('splits 10,000 parts 70/30 within 2 points (keys from %i)', (firstKey) => {
    const counts = split(up('carrierA', 'carrierB'), 10_000, firstKey);
    const shareA = (counts.get('carrierA') ?? 0) / 100;
    const shareB = (counts.get('carrierB') ?? 0) / 100;
    expect(Math.abs(shareA - 70)).toBeLessThanOrEqual(2);
    expect(Math.abs(shareB - 30)).toBeLessThanOrEqual(2);
    expect(shareA + shareB).toBe(100);
  });

  it('leaves the split to the transports up when one has been down longer than failoverAfterMs', () => {
    const aDown: TransportConditions = new Map([['carrierA', { up: false, sinceMs: NOW - 60_000 }], ['carrierB', { up: true }]]);
    expect(split(aDown, 1_000)).toEqual(new Map([['carrierB', 1_000]]));
  });

  it('gives a key the same transport every time', () => {
    const conditions = up('carrierA', 'carrierB');
    expect(planRoute(table, part('447700900123', 'acme', 42), conditions, NOW)).toEqual(planRoute(table, part('447700900123', 'acme', 42), conditions, NOW));
  });
});

describe('send windows', () => {
  const table = new RouteTable([{ prefix: '', transport: 'sim', window: { from: '08:00', to: '21:00', timeZone: 'Europe/Dublin' } }]);
  const conditions = up('sim');
  const at = (iso: string): RouteChoice => planRoute(table, part('353871234567'), conditions, Date.parse(iso));

  it('sends inside the window', () => {
    expect(at('2026-06-10T07:00:00Z').kind).toBe('send'); // 08:00 IST: the window's first minute
    expect(at('2026-06-10T19:59:00Z').kind).toBe('send'); // 20:59 IST
  });

  it('waits outside it until it opens, in the window\'s time zone', () => {
    expect(at('2026-06-10T20:00:00Z')).toMatchObject({ kind: 'wait', transport: 'sim', untilMs: Date.parse('2026-06-11T07:00:00Z') }); // 21:00 IST
    expect(at('2026-06-10T05:00:00Z')).toMatchObject({ kind: 'wait', untilMs: Date.parse('2026-06-10T07:00:00Z') }); // 06:00 IST
    expect(at('2026-01-10T07:30:00Z')).toMatchObject({ kind: 'wait', untilMs: Date.parse('2026-01-10T08:00:00Z') }); // 07:30 GMT
  });

  it('opens at 08:00 local on the day the clocks go forward (23 hours after the evening before closed)', () => {
    // 2026-03-29: Europe/Dublin goes from GMT to IST at 01:00 UTC.
    expect(at('2026-03-28T21:00:00Z')).toMatchObject({ kind: 'wait', untilMs: Date.parse('2026-03-29T07:00:00Z') });
    expect(at('2026-03-29T07:00:00Z').kind).toBe('send');
  });

  it('opens at the moved-forward time when its opening does not exist that day, as sendAt does', () => {
    const gap = new RouteTable([{ prefix: '', transport: 'sim', window: { from: '01:30', to: '05:00', timeZone: 'Europe/Dublin' } }]);
    // 01:30 does not exist on 2026-03-29 in Dublin: it is read as 02:30 IST (01:30 UTC).
    expect(planRoute(gap, part('353871234567'), conditions, Date.parse('2026-03-29T00:10:00Z'))).toMatchObject({ kind: 'wait', untilMs: Date.parse('2026-03-29T01:30:00Z') });
  });

  it('spans midnight when "from" is after "to"', () => {
    const night = new RouteTable([{ prefix: '', transport: 'sim', window: { from: '22:00', to: '06:00', timeZone: 'UTC' } }]);
    expect(planRoute(night, part('3538'), conditions, Date.parse('2026-06-10T23:00:00Z')).kind).toBe('send');
    expect(planRoute(night, part('3538'), conditions, Date.parse('2026-06-10T05:59:00Z')).kind).toBe('send');
    expect(planRoute(night, part('3538'), conditions, Date.parse('2026-06-10T06:00:00Z'))).toMatchObject({ kind: 'wait', untilMs: Date.parse('2026-06-10T22:00:00Z') });
  });
});
