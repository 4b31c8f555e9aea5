/**
 * The recovery planner (src/engine/steps/recovery.ts), pure: what a start and a stop hand back to
 * the queue, from the claimant the engine's claims are stamped with.
 */
import { describe, expect, it } from 'vitest';
import { planStartRecovery, planStopRequeue } from '../../../src/engine/steps/recovery.js';

describe('recovery plans', () => {
  it('a single gateway (no node id) requeues its unstamped parts at start and reopens orphaned recipients', () => {
    expect(planStartRecovery(null)).toEqual({ requeue: { kind: 'requeue', claimant: null }, reopenOrphans: true });
  });

  it('a cluster node requeues nothing at start: live peers\' parts are submitting too, the reaper takes expired nodes\'', () => {
    expect(planStartRecovery('node-a')).toEqual({ requeue: { kind: 'none' }, reopenOrphans: true });
  });

  it('at stop, each engine requeues only its own parts still submitting', () => {
    expect(planStopRequeue('node-a')).toEqual({ kind: 'requeue', claimant: 'node-a' });
    expect(planStopRequeue(null)).toEqual({ kind: 'requeue', claimant: null });
  });
});
