import { runDdl } from './dialect.js';
/**
 * Who holds what in a cluster: a part being submitted is stamped with the claiming
 * node's id (message_parts.claimed_by), an outbox event being sent with the sending node's id and
 * lease (webhook_outbox.leased_by, lease_until), a campaign being processed with the processing
 * node's id (campaigns.processing_by). Every later write by that node is fenced on its stamp, and
 * a live node clears the stamps of an expired node when it takes its work over. NULL on SQLite,
 * where the one `serve` per file needs no stamps.
 */
export class ClusterClaims1765300000002 {
    name = 'ClusterClaims1765300000002';
    async up(queryRunner) {
        await runDdl(queryRunner, [
            `ALTER TABLE message_parts ADD COLUMN claimed_by TEXT`,
            `ALTER TABLE webhook_outbox ADD COLUMN leased_by TEXT`,
            `ALTER TABLE webhook_outbox ADD COLUMN lease_until INTEGER`,
            `ALTER TABLE campaigns ADD COLUMN processing_by TEXT`,
            // A takeover finds an expired node's in-flight parts without scanning every part.
            `CREATE INDEX message_parts_claimed_by ON message_parts(claimed_by) WHERE claimed_by IS NOT NULL`,
        ]);
    }
    async down(queryRunner) {
        await queryRunner.query(`DROP INDEX IF EXISTS message_parts_claimed_by`);
        await queryRunner.query(`ALTER TABLE campaigns DROP COLUMN processing_by`);
        await queryRunner.query(`ALTER TABLE webhook_outbox DROP COLUMN lease_until`);
        await queryRunner.query(`ALTER TABLE webhook_outbox DROP COLUMN leased_by`);
        await queryRunner.query(`ALTER TABLE message_parts DROP COLUMN claimed_by`);
    }
}
