import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runDdl } from './dialect.js';

/**
 * The delivery sender sends a message's next deliver_sm only when no older row of that message
 * still waits. Without an index by message, that check walked every older waiting row of the
 * account (smpp_deliveries_waiting) for each row leased: with a few hundred rows in flight, tens
 * of microseconds a receipt. This partial index holds only the waiting rows with a message id
 * (what the check asks for), so the check is one seek, and a delivered row leaves it.
 */
export class SmppDeliveriesMessageIndex1766300000001 implements MigrationInterface {
  name = 'SmppDeliveriesMessageIndex1766300000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await runDdl(queryRunner, [
      `CREATE INDEX smpp_deliveries_message_waiting ON smpp_deliveries(message_id, id) WHERE state = 'waiting' AND message_id IS NOT NULL`,
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX smpp_deliveries_message_waiting');
  }
}
