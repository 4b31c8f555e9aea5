import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runDdl } from './dialect.js';

/**
 * Who holds a piece of work, for a cluster of nodes on PostgreSQL (issue 11 item 2): the id of the
 * node (cluster_nodes.id, fresh per start) that claimed a part for submitting, is processing a
 * campaign, or leased an outbox event for an attempt. Outcome writes are fenced on the stamp (a
 * node that lost its claim changes nothing), and a live node requeues an expired node's stamped
 * work in one transaction (src/store/pg/reap-hooks.ts). NULL: nobody's (SQLite never stamps: one
 * `serve` per file). The partial indexes hold stamped rows only, so the reaper's look-up by node
 * is an index range however large the tables.
 */
export class ClusterClaimStamps1765100000001 implements MigrationInterface {
  name = 'ClusterClaimStamps1765100000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await runDdl(queryRunner, [
      `ALTER TABLE message_parts ADD COLUMN claimed_by TEXT`,
      `ALTER TABLE campaigns ADD COLUMN processing_by TEXT`,
      `ALTER TABLE webhook_outbox ADD COLUMN leased_by TEXT`,
      `CREATE INDEX message_parts_claimed_by ON message_parts(claimed_by) WHERE claimed_by IS NOT NULL`,
      `CREATE INDEX webhook_outbox_leased_by ON webhook_outbox(leased_by) WHERE leased_by IS NOT NULL`,
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const sql of [
      `DROP INDEX IF EXISTS webhook_outbox_leased_by`,
      `DROP INDEX IF EXISTS message_parts_claimed_by`,
      `ALTER TABLE webhook_outbox DROP COLUMN leased_by`,
      `ALTER TABLE campaigns DROP COLUMN processing_by`,
      `ALTER TABLE message_parts DROP COLUMN claimed_by`,
    ]) await queryRunner.query(sql);
  }
}
