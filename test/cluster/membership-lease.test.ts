/**
 * ClusterMembership.leaseHeld (NodeIdSource): measured from when the last confirmed beat was SENT,
 * on the process's monotonic clock, against the lease less one heartbeat. The registry here is an
 * in-memory stand-in answering 'alive' or 'fenced'; the database side of beats is covered by
 * cluster-runtime.test.ts on a real PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { ClusterMembership, type MembershipRegistry } from '../../src/cluster/membership.js';
import type { HeartbeatOutcome, NodeIdentity } from '../../src/store/postgres/node-registry.js';

function registry(answers: HeartbeatOutcome[], beatTakesMs: number, clock: { nowMs: number }): MembershipRegistry {
  let identity: NodeIdentity = { id: 'node-1', host: 'h', pid: 1, apiPort: null };
  return {
    leaseMs: 5_000,
    get identity() {
      return identity;
    },
    heartbeat: () => {
      clock.nowMs += beatTakesMs;
      return Promise.resolve(answers.shift() ?? 'alive');
    },
    rejoin: () => {
      identity = { ...identity, id: `node-${Number(identity.id.slice(5)) + 1}` };
      return Promise.resolve(identity);
    },
    reapExpired: () => Promise.resolve({ nodeIds: [], requeued: [] }),
    liveNodes: () => Promise.resolve(1),
    leave: () => Promise.resolve(),
  };
}

describe('ClusterMembership.leaseHeld', () => {
  it('is false before the first beat, true after one, and false once the lease less a heartbeat has passed since that beat was sent', async () => {
    const clock = { nowMs: 0 };
    const membership = new ClusterMembership(registry([], 300, clock), [], () => clock.nowMs);
    expect(membership.leaseHeld()).toBe(false);
    await membership.beat(); // sent at 0, answered at 300
    expect(membership.leaseHeld()).toBe(true);
    clock.nowMs = 3_999;
    expect(membership.leaseHeld()).toBe(true);
    // 5,000 ms lease less one 1,000 ms heartbeat, counted from the send (0), not the answer (300).
    clock.nowMs = 4_000;
    expect(membership.leaseHeld()).toBe(false);
    await membership.beat(); // sent at 4,000
    expect(membership.leaseHeld()).toBe(true);
  });

  it('after a freeze past the lease, it is false until the beat that finds the node fenced has rejoined', async () => {
    const clock = { nowMs: 0 };
    const membership = new ClusterMembership(registry(['alive', 'fenced'], 10, clock), [], () => clock.nowMs);
    await membership.beat();
    clock.nowMs = 60_000; // SIGSTOP for a minute, then SIGCONT
    expect(membership.leaseHeld()).toBe(false);
    const report = await membership.beat();
    expect(report.fenced).toEqual({ formerId: 'node-1', newId: 'node-2' });
    expect(membership.nodeId()).toBe('node-2');
    expect(membership.leaseHeld()).toBe(true);
  });
});
