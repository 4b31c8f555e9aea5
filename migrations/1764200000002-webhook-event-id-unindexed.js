import { dialectOf } from './dialect.js';
/**
 * Takes the trigger and the unique index of webhook_outbox.event_id (1764200000001) off the enqueue
 * path. Nothing looks an event up by its id, and the trigger, though its WHEN is false for every row
 * the store inserts (it names the id), roughly doubled the cost of an insert inside the engine's
 * receipt transaction (50k inserts: ~230 ms without, ~520 ms with). A row that reaches the sender
 * without an id gets one there, before its first request (src/store/sqlite/webhook-store.ts assignEventId).
 */
const RANDOM_UUID_SQL = `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
  || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`;
export class WebhookEventIdUnindexed1764200000002 {
    name = 'WebhookEventIdUnindexed1764200000002';
    async up(queryRunner) {
        // PostgreSQL never had the trigger (1764200000001); its DROP TRIGGER names the table.
        if (dialectOf(queryRunner) === 'postgres')
            await queryRunner.query(`DROP TRIGGER IF EXISTS webhook_outbox_event_id_default ON webhook_outbox`);
        else
            await queryRunner.query(`DROP TRIGGER IF EXISTS webhook_outbox_event_id_default`);
        await queryRunner.query(`DROP INDEX IF EXISTS webhook_outbox_event_id`);
    }
    async down(queryRunner) {
        await queryRunner.query(`CREATE UNIQUE INDEX webhook_outbox_event_id ON webhook_outbox(event_id)`);
        if (dialectOf(queryRunner) === 'postgres')
            return;
        await queryRunner.query(`CREATE TRIGGER webhook_outbox_event_id_default AFTER INSERT ON webhook_outbox WHEN NEW.event_id IS NULL
       BEGIN UPDATE webhook_outbox SET event_id = ${RANDOM_UUID_SQL} WHERE id = NEW.id; END`);
    }
}
