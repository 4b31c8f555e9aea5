import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf } from './dialect.js';

/**
 * Indexes of the engine's hot tables that hold only the live rows a query looks for (SQLite only).
 *
 * Every change of an indexed column rewrites the row's entry (a delete and an insert in that
 * index's B-tree), so a part that went queued -> submitting -> submitted -> delivered rewrote
 * message_parts_due, message_parts_fair_claim and message_parts_message_id 3-4 times over its
 * life, and a recipient its dispatch entry once and its status entry once. A partial index holds a
 * row only while its WHERE holds: the row enters it once and leaves it once, and the history of
 * finished parts is not in it at all. Which query uses which index (EXPLAIN QUERY PLAN on SQLite;
 * test/store/live-row-index-plans.test.ts checks these plans on the statements the stores run):
 *
 * - message_parts_fair_claim (transport, state, campaign_id, next_attempt_at) WHERE state = 'queued':
 *   the claim (claim-queries.ts CLAIM_CANDIDATES_SQL, CLAIM_FIRST_OF_CAMPAIGNS_SQL,
 *   dispatch-store.ts CLAIM_SQL): `SEARCH ... USING COVERING INDEX message_parts_fair_claim
 *   (transport=? AND state=? AND campaign_id>?)`; the queued count and the oldest due part per
 *   transport (status-store.ts); rerouting the due parts (reroute-queries.ts `due`). Same columns
 *   as before, so the claim's plans are unchanged; the state column is constant in it now.
 * - message_parts_submitting (transport) WHERE state = 'submitting': the submitting count per
 *   transport and the in-flight parts of the status page (status-store.ts), requeueing the parts
 *   left submitting at start (recovery-queries.ts). A part enters it at its claim and leaves at its
 *   outcome: 2 B-tree writes, where the due and fair-claim indexes took 4 for the same two steps.
 * - message_parts_message_id (transport, message_id) WHERE message_id IS NOT NULL: a receipt's part
 *   (part-change-queries.ts `targetParts`, `matchable`: `SEARCH ... USING INDEX message_parts_message_id
 *   (transport=? AND message_id=?)`), the simulator's recovery (messageIdsAwaitingReceipt). A part
 *   enters it once, when the carrier gives its id; a queued part is not in it.
 * - message_parts_due (state, next_attempt_at): dropped. Every query that read it asks for queued
 *   or submitting parts, which the two partial indexes above serve.
 * - recipients_dispatch (campaign_id, dispatch_state) WHERE dispatch_state = 'waiting': the waiting
 *   recipients a materialise pass counts and takes (materialise-queries.ts), a campaign's close
 *   (CLOSE_CAMPAIGNS_SQL NOT EXISTS), the waiting count of the status page. A dispatched recipient
 *   leaves it (one delete) instead of being rewritten.
 * - recipients_status (campaign_id, status): unchanged; counts by status of a campaign (its summary,
 *   the status page, `campaign show`) read every status, so it cannot be partial.
 * - receipts_pending (match_state, transport, message_id) WHERE match_state = 'pending': the
 *   unmatched receipts of a message id (part-change-queries.ts `unmatchedOf`, dispatch-store.ts
 *   `pendingReceipts`), the sweep (`matchable`, expireReceipts). A receipt matched on arrival, nearly
 *   every one, never enters it.
 * - message_parts_claimed_by and UNIQUE (recipient_id, part_number): unchanged (the cluster's claim
 *   stamps; a recipient's parts).
 *
 * SQLite uses a partial index only when the query's WHERE implies the index's (a literal
 * `state = 'queued'`, not `state = ?`): the stores' queries say the state they look for literally.
 *
 * PostgreSQL keeps its indexes: this migration changes nothing there. What it buys is measured on
 * the embedded gateway (SQLite rewrites an index entry only when that index's columns change);
 * PostgreSQL writes a new row version on every update, with its own rules for which indexes get a
 * new entry (HOT updates), and its claim and takeover queries (FOR UPDATE SKIP LOCKED, the claim
 * stamps) would need their plans checked on a PostgreSQL bench of their own before their indexes
 * change. Until then PostgreSQL's behaviour stays exactly as it is.
 */
const SQLITE_UP = [
  `DROP INDEX message_parts_due`,
  `DROP INDEX message_parts_fair_claim`,
  `CREATE INDEX message_parts_fair_claim ON message_parts(transport, state, campaign_id, next_attempt_at) WHERE state = 'queued'`,
  `CREATE INDEX message_parts_submitting ON message_parts(transport) WHERE state = 'submitting'`,
  `DROP INDEX message_parts_message_id`,
  `CREATE INDEX message_parts_message_id ON message_parts(transport, message_id) WHERE message_id IS NOT NULL`,
  `DROP INDEX recipients_dispatch`,
  `CREATE INDEX recipients_dispatch ON recipients(campaign_id, dispatch_state) WHERE dispatch_state = 'waiting'`,
  `DROP INDEX receipts_pending`,
  `CREATE INDEX receipts_pending ON receipts(match_state, transport, message_id) WHERE match_state = 'pending'`,
] as const;

const SQLITE_DOWN = [
  `DROP INDEX receipts_pending`,
  `CREATE INDEX receipts_pending ON receipts(match_state, transport, message_id)`,
  `DROP INDEX recipients_dispatch`,
  `CREATE INDEX recipients_dispatch ON recipients(campaign_id, dispatch_state)`,
  `DROP INDEX message_parts_message_id`,
  `CREATE INDEX message_parts_message_id ON message_parts(transport, message_id)`,
  `DROP INDEX message_parts_submitting`,
  `DROP INDEX message_parts_fair_claim`,
  `CREATE INDEX message_parts_fair_claim ON message_parts(transport, state, campaign_id, next_attempt_at)`,
  `CREATE INDEX message_parts_due ON message_parts(state, next_attempt_at)`,
] as const;

export class LiveRowIndexes1766400000001 implements MigrationInterface {
  name = 'LiveRowIndexes1766400000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (dialectOf(queryRunner) !== 'sqlite') return;
    for (const sql of SQLITE_UP) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (dialectOf(queryRunner) !== 'sqlite') return;
    for (const sql of SQLITE_DOWN) await queryRunner.query(sql);
  }
}
