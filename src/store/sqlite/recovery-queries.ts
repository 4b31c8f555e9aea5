/**
 * The store side of recovery on SQLite (RecoveryStepStore<'sync'> in src/engine/steps/recovery.ts):
 * one statement per kind of write, inside the caller's db.transaction.
 */
import type { SqliteDatabase } from './database.js';

/**
 * Parts left 'submitting' by a stop go back to the queue: read through the submitting parts'
 * partial index (message_parts_submitting), the state literal so SQLite uses it. Exported so
 * test/store/live-row-index-plans.test.ts checks the plan.
 */
export const RECOVERY_SQL = {
  requeueSubmitting: `UPDATE message_parts SET state = 'queued', claimed_by = NULL, updated_at = ? WHERE state = 'submitting' AND claimed_by IS ?`,
} as const;

export class SqliteRecoveryStore {
  private readonly s;

  constructor(db: SqliteDatabase) {
    this.s = {
      requeue: db.prepare<[number, string | null], unknown>(RECOVERY_SQL.requeueSubmitting),
      reopenRecipients: db.prepare<[], string>(
        `UPDATE recipients SET dispatch_state = 'waiting' WHERE dispatch_state = 'dispatched'
           AND NOT EXISTS (SELECT 1 FROM message_parts p WHERE p.recipient_id = recipients.id)
         RETURNING campaign_id`,
      ).pluck(),
      reopenCampaigns: db.prepare<[string], unknown>(`UPDATE campaigns SET dispatched_at = NULL WHERE id IN (SELECT value FROM json_each(?))`),
    };
  }

  requeueSubmitting(claimant: string | null, nowMs: number): number {
    return this.s.requeue.run(nowMs, claimant).changes;
  }

  reopenOrphanedRecipients(): number {
    const campaigns = this.s.reopenRecipients.all();
    if (campaigns.length > 0) this.s.reopenCampaigns.run(JSON.stringify([...new Set(campaigns)]));
    return campaigns.length;
  }
}
