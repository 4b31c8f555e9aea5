import { runDdl } from './dialect.js';
/**
 * PDUs a modem handed up that smsgate could not decode. Each is stored with its
 * raw hex and the decoder's reason before it is deleted from the SIM, so nothing leaves the SIM
 * unrecorded and an operator can decode it later. A table of its own rather than a flag on
 * inbound_messages: such a PDU has no sender, recipient or text, and may be a status report.
 */
export class UndecodablePdus1764700000001 {
    name = 'UndecodablePdus1764700000001';
    async up(queryRunner) {
        await runDdl(queryRunner, [
            `CREATE TABLE undecodable_pdus (
        id INTEGER PRIMARY KEY,
        transport TEXT NOT NULL,
        device TEXT NOT NULL,
        hex TEXT NOT NULL,
        reason_code TEXT NOT NULL,
        reason TEXT NOT NULL,
        received_at INTEGER NOT NULL
      )`,
        ]);
    }
    async down(queryRunner) {
        await queryRunner.query(`DROP TABLE IF EXISTS undecodable_pdus`);
    }
}
