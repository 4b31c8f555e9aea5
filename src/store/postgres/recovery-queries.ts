/**
 * The store side of recovery on PostgreSQL (RecoveryStepStore<'async'> in
 * src/engine/steps/recovery.ts): one statement per kind of write, on a connection inside the
 * caller's transaction (or the pool, each statement its own unit).
 */
import { changes, rows, type PgRunner } from './pool.js';

export class PgRecoveryStore {
  constructor(private readonly db: PgRunner) {}

  /** Never another live node's parts: only those stamped with `claimant` (null: a single gateway's, unstamped). */
  requeueSubmitting(claimant: string | null, nowMs: number): Promise<number> {
    return changes(this.db,
      `UPDATE message_parts SET state = 'queued', claimed_by = NULL, updated_at = $1 WHERE state = 'submitting' AND claimed_by IS NOT DISTINCT FROM $2`,
      [nowMs, claimant]);
  }

  async reopenOrphanedRecipients(): Promise<number> {
    const reopened = await rows<{ campaign_id: string }>(this.db,
      `UPDATE recipients r SET dispatch_state = 'waiting' WHERE dispatch_state = 'dispatched'
         AND NOT EXISTS (SELECT 1 FROM message_parts p WHERE p.recipient_id = r.id)
       RETURNING campaign_id`);
    const campaigns = [...new Set(reopened.map((r) => r.campaign_id))];
    if (campaigns.length > 0) await changes(this.db, 'UPDATE campaigns SET dispatched_at = NULL WHERE id = ANY($1::text[])', [campaigns]);
    return reopened.length;
  }
}
