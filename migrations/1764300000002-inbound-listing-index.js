/**
 * GET /v1/inbound pages a client's messages in storage order (WHERE client_id = ? AND id > ?
 * ORDER BY id, src/store/sqlite/inbound-store.ts): this index yields them in that order without a sort.
 */
export class InboundListingIndex1764300000002 {
    name = 'InboundListingIndex1764300000002';
    async up(queryRunner) {
        await queryRunner.query(`CREATE INDEX inbound_messages_client_order ON inbound_messages(client_id, id)`);
    }
    async down(queryRunner) {
        await queryRunner.query(`DROP INDEX IF EXISTS inbound_messages_client_order`);
    }
}
