/**
 * A transport lane claims its due parts with
 *   WHERE state = 'queued' AND transport = ? AND next_attempt_at <= ? ORDER BY next_attempt_at, id
 * (src/store/sqlite/dispatch-store.ts). With only message_parts_due (state, next_attempt_at) SQLite walks
 * every queued part in due order and skips those of other transports, so a backlog held for a
 * transport that is down slows every other lane's claim. This index starts at the transport and
 * yields the parts in claim order (the rowid id ends every index entry). It also serves the
 * start-up look-up of parts still 'submitted' on a transport (receipt recovery).
 */
export class MessagePartsClaimIndex1763900000000 {
    name = 'MessagePartsClaimIndex1763900000000';
    async up(queryRunner) {
        await queryRunner.query(`CREATE INDEX message_parts_claim ON message_parts(transport, state, next_attempt_at)`);
    }
    async down(queryRunner) {
        await queryRunner.query(`DROP INDEX IF EXISTS message_parts_claim`);
    }
}
