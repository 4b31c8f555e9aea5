/**
 * What a start and a stop hand back to the queue. A part left 'submitting' may or may not have
 * reached the peer: it is sent again (at-least-once; duplicates are at most the submits that were
 * in flight). Which such parts are this engine's follows from its claimant (the id claims are
 * stamped with): a single gateway (SQLite, or PostgreSQL without a node id) claims unstamped, and
 * every unstamped part is its own (one gateway per file or database). A cluster node requeues
 * nothing at start, where live peers' parts are 'submitting' too (the cluster runtime's reaper
 * requeues expired nodes' parts), and only its own at stop.
 */
import type { StoreMode, StoreResult } from '../store-mode.js';

/**
 * The store side of recovery. Each method is one statement per kind of write (set-based), run in
 * the caller's transaction.
 */
export interface RecoveryStepStore<M extends StoreMode> {
  /** Parts 'submitting' under `claimant`'s stamp (null: unstamped) -> 'queued', the stamp cleared, no attempt spent; returns how many. */
  requeueSubmitting(claimant: string | null, nowMs: number): StoreResult<M, number>;
  /**
   * Recipients marked dispatched without any part go back to waiting, their campaigns to not
   * dispatched; returns the recipients reopened. Materialising writes parts and marks in one
   * transaction, so only an older version leaves these; a peer's uncommitted marks are not seen.
   */
  reopenOrphanedRecipients(): StoreResult<M, number>;
}

/** Whose 'submitting' parts to requeue: those stamped with `claimant`, or none. */
export type RequeuePlan = { kind: 'requeue'; claimant: string | null } | { kind: 'none' };

export interface StartRecoveryPlan {
  requeue: RequeuePlan;
  reopenOrphans: boolean;
}

/** At start, before the transports: a single gateway requeues its unstamped parts; a cluster node none. */
export function planStartRecovery(claimant: string | null): StartRecoveryPlan {
  return { requeue: claimant === null ? { kind: 'requeue', claimant: null } : { kind: 'none' }, reopenOrphans: true };
}

/** At stop, after the drain: this engine's own parts still 'submitting'. */
export function planStopRequeue(claimant: string | null): RequeuePlan {
  return { kind: 'requeue', claimant };
}
