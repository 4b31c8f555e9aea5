/**
 * The transports' states as the route planner reads them (src/engine/transport-conditions.ts):
 * bound, or down since when, from the engine's state events and each snapshot's own reading.
 */
import { describe, expect, it } from 'vitest';
import { TransportConditionTracker } from '../../src/engine/transport-conditions.js';
import type { Transport, TransportState } from '../../src/transports/transport.js';

function transport(name: string, initial: TransportState): Transport & { state: TransportState } {
  const t = { name, state: initial, currentState: () => t.state };
  return t as unknown as Transport & { state: TransportState };
}

const isBound = (t: Transport): boolean => t.currentState().state === 'bound';

describe('TransportConditionTracker', () => {
  it('counts a transport not yet bound as down since the start, and up once bound', () => {
    const a = transport('a', { state: 'binding' });
    const tracker = new TransportConditionTracker([a], isBound, 1_000);
    expect(tracker.snapshot(5_000).get('a')).toEqual({ up: false, sinceMs: 1_000 });
    a.state = { state: 'bound' };
    tracker.observe('a', a.state, 6_000);
    expect(tracker.snapshot(6_000).get('a')).toEqual({ up: true });
  });

  it('dates a loss from its state event, or from the first snapshot that sees it when no event came', () => {
    const a = transport('a', { state: 'bound' });
    const b = transport('b', { state: 'bound' });
    const tracker = new TransportConditionTracker([a, b], isBound, 0);
    a.state = { state: 'down', reason: 'connection lost' };
    tracker.observe('a', a.state, 10_000);
    b.state = { state: 'down', reason: 'connection lost' };
    expect(tracker.snapshot(12_000)).toEqual(new Map([['a', { up: false, sinceMs: 10_000 }], ['b', { up: false, sinceMs: 12_000 }]]));
    // A second event while still down does not move the time it went down.
    tracker.observe('a', { state: 'binding' }, 13_000);
    expect(tracker.snapshot(14_000).get('a')).toEqual({ up: false, sinceMs: 10_000 });
  });

  it('asks the given judge: a cluster node counts a transport whose binds its peers hold as up', () => {
    const a = transport('a', { state: 'down', reason: 'no bind slot held' });
    const tracker = new TransportConditionTracker([a], () => true, 0);
    expect(tracker.snapshot(60_000).get('a')).toEqual({ up: true });
  });
});
