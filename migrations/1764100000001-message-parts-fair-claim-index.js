/**
 * Fair claims: a transport lane now claims round robin over the campaigns that
 * have queued parts on it (src/engine/fair-claim.ts), with two statements of src/store/sqlite/dispatch-store.ts:
 *   - the next campaign after a cursor: MIN(campaign_id) WHERE transport = ? AND state = 'queued'
 *     AND campaign_id > ?, repeated as a recursive skip-scan, one index seek per campaign;
 *   - a campaign's due parts: WHERE transport = ? AND state = 'queued' AND campaign_id = ?
 *     AND next_attempt_at <= ? ORDER BY next_attempt_at, id.
 * This index serves both in index order (the rowid id ends every entry), and every query the
 * (transport, state, next_attempt_at) index served by its (transport, state) prefix, so that one
 * is dropped: one index fewer to update on each part state change.
 */
export class MessagePartsFairClaimIndex1764100000001 {
    name = 'MessagePartsFairClaimIndex1764100000001';
    async up(queryRunner) {
        await queryRunner.query(`CREATE INDEX message_parts_fair_claim ON message_parts(transport, state, campaign_id, next_attempt_at)`);
        await queryRunner.query(`DROP INDEX IF EXISTS message_parts_claim`);
    }
    async down(queryRunner) {
        await queryRunner.query(`CREATE INDEX IF NOT EXISTS message_parts_claim ON message_parts(transport, state, next_attempt_at)`);
        await queryRunner.query(`DROP INDEX IF EXISTS message_parts_fair_claim`);
    }
}
