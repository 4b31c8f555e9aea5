/**
 * The reroute planner (src/engine/steps/reroute.ts), pure: which queued parts move and where, which
 * wait for their window, and which scan a pass needs.
 */
import { describe, expect, it } from 'vitest';
import { RouteTable, type TransportConditions } from '../../../src/engine/routing.js';
import { planReroute, planRerouteScan, type QueuedPart } from '../../../src/engine/steps/reroute.js';

const NOW = Date.parse('2026-06-10T12:00:00Z');
const failover = new RouteTable([
  { prefix: '353', transports: ['carrierA', 'modems'], strategy: 'failover', failoverAfterMs: 10_000, name: 'ie' },
  { prefix: '', transport: 'sim', window: { from: '08:00', to: '21:00', timeZone: 'Europe/Dublin' } },
]);
const part = (id: number, transport: string, msisdn = '353871234567', nextAttemptAt = NOW): QueuedPart => ({
  id, recipient_id: id, transport, next_attempt_at: nextAttemptAt, msisdn, client_name: 'acme',
});
const conditions = (aDownForMs: number | null): TransportConditions => new Map([
  ['carrierA', aDownForMs === null ? { up: true } : { up: false, sinceMs: NOW - aDownForMs }],
  ['modems', { up: true }],
  ['sim', { up: true }],
]);

describe('planReroute', () => {
  it('moves parts off a transport down longer than failoverAfterMs, and leaves them while it is down for less', () => {
    const parts = [part(1, 'carrierA'), part(2, 'carrierA')];
    expect(planReroute(parts, { routes: failover, conditions: conditions(9_000) }, NOW)).toEqual([]);
    expect(planReroute(parts, { routes: failover, conditions: conditions(10_000) }, NOW)).toEqual([
      { partId: 1, from: 'carrierA', to: 'modems', nextAttemptAt: NOW, route: 'ie' },
      { partId: 2, from: 'carrierA', to: 'modems', nextAttemptAt: NOW, route: 'ie' },
    ]);
  });

  it('moves parts back to the first transport once it is up', () => {
    expect(planReroute([part(3, 'modems', '353861234567', NOW + 500)], { routes: failover, conditions: conditions(null) }, NOW)).toEqual([
      { partId: 3, from: 'modems', to: 'carrierA', nextAttemptAt: NOW + 500, route: 'ie' },
    ]);
  });

  it('prefers another transport for parts just requeued after a temporary failure', () => {
    expect(planReroute([part(4, 'carrierA')], { routes: failover, conditions: conditions(null) }, NOW, true)).toEqual([
      { partId: 4, from: 'carrierA', to: 'modems', nextAttemptAt: NOW, route: 'ie' },
    ]);
    // A single-transport route has nowhere else to go: the retry stays.
    expect(planReroute([part(5, 'sim', '447700900123', Date.parse('2026-06-10T10:00:00Z'))], { routes: failover, conditions: conditions(null) }, NOW, true)).toEqual([]);
  });

  it('pushes a due part of a closed window to its opening, and leaves a part with no route where it is', () => {
    const evening = Date.parse('2026-06-10T20:30:00Z'); // 21:30 IST
    expect(planReroute([part(6, 'sim', '447700900123', evening)], { routes: failover, conditions: conditions(null) }, evening)).toEqual([
      { partId: 6, from: 'sim', to: 'sim', nextAttemptAt: Date.parse('2026-06-11T07:00:00Z'), route: '' },
    ]);
    const noDefault = new RouteTable([{ prefix: '44', transport: 'sim' }]);
    expect(planReroute([part(7, 'carrierA')], { routes: noDefault, conditions: conditions(null) }, NOW)).toEqual([]);
  });
});

describe('planRerouteScan', () => {
  it('scans everything when what the routes choose changed, nothing when not, and due parts of closed windows', () => {
    const routing = { routes: failover, conditions: conditions(null) };
    const first = planRerouteScan(routing, NOW, undefined);
    expect(first.scan).toEqual({ kind: 'all' });
    expect(planRerouteScan(routing, NOW, first.signature).scan).toEqual({ kind: 'none' });
    // carrierA down past failoverAfterMs: the routes choose otherwise.
    expect(planRerouteScan({ routes: failover, conditions: conditions(60_000) }, NOW, first.signature).scan).toEqual({ kind: 'all' });
    const evening = Date.parse('2026-06-10T20:30:00Z');
    const closed = planRerouteScan(routing, evening, planRerouteScan(routing, evening, undefined).signature);
    expect(closed.scan).toEqual({ kind: 'due', transports: ['sim'] });
  });
});
