import { dialectOf, runDdl } from './dialect.js';
/**
 * What automatic redrive and receiver de-duplication need on every outbox event:
 *
 * - `event_id`: a UUID fixed when the event is queued and sent as `X-Event-Id` on every attempt,
 *   retry, redrive and replay, so a receiver can de-duplicate. The store writes one at insert; the
 *   trigger gives one to a row inserted without it (any other insert path), and rows queued before
 *   this migration get one here.
 * - `dead_reason`: why a dead letter died, 'transient' (network, timeout, 404, 408, 5xx, circuit
 *   open: SPEC "Events" point 5's retried failures) or 'permanent' (any other answer). Only
 *   transient ones are redriven.
 * - `dead_url`: the endpoint URL the event died at; an endpoint's dead letters are redriven when that
 *   URL answers 2xx again.
 *
 * Dead letters from before are classified here from their last_error, as the sender would have, and
 * given the client's receipt webhook URL (every event before this migration is a delivery receipt).
 */
const RANDOM_UUID_SQL = `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
  || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`;
export class WebhookEventIdentity1764200000001 {
    name = 'WebhookEventIdentity1764200000001';
    async up(queryRunner) {
        if (dialectOf(queryRunner) === 'postgres')
            return this.upPostgres(queryRunner);
        const statements = [
            `ALTER TABLE webhook_outbox ADD COLUMN event_id TEXT`,
            `ALTER TABLE webhook_outbox ADD COLUMN dead_reason TEXT CHECK (dead_reason IN ('transient', 'permanent'))`,
            `ALTER TABLE webhook_outbox ADD COLUMN dead_url TEXT`,
            // One UUID per row: randomblob() is evaluated for each row the UPDATE touches.
            `UPDATE webhook_outbox SET event_id = ${RANDOM_UUID_SQL} WHERE event_id IS NULL`,
            `CREATE UNIQUE INDEX webhook_outbox_event_id ON webhook_outbox(event_id)`,
            `CREATE TRIGGER webhook_outbox_event_id_default AFTER INSERT ON webhook_outbox WHEN NEW.event_id IS NULL
       BEGIN UPDATE webhook_outbox SET event_id = ${RANDOM_UUID_SQL} WHERE id = NEW.id; END`,
            // The sender's codes: HTTP_<status>, CIRCUIT_OPEN, TIMEOUT, network error codes (ECONNREFUSED...),
            // and the permanent NO_WEBHOOK_URL, SECRET_UNREADABLE, INVALID_URL.
            `UPDATE webhook_outbox SET
         dead_reason = CASE
           WHEN last_error LIKE 'HTTP\\_5__' ESCAPE '\\' OR last_error IN ('HTTP_404', 'HTTP_408') THEN 'transient'
           WHEN last_error LIKE 'HTTP\\_%' ESCAPE '\\' OR last_error IN ('NO_WEBHOOK_URL', 'SECRET_UNREADABLE', 'INVALID_URL') OR last_error IS NULL THEN 'permanent'
           ELSE 'transient' END,
         dead_url = (SELECT c.webhook_url FROM clients c WHERE c.id = webhook_outbox.client_id)
       WHERE state = 'dead'`,
            // The redrive's look-ups: an endpoint's transient dead letters, oldest first (the probe), and
            // the endpoints that have any (at start).
            `CREATE INDEX webhook_outbox_redrive ON webhook_outbox(client_id, dead_url, id) WHERE state = 'dead' AND dead_reason = 'transient'`,
        ];
        for (const sql of statements)
            await queryRunner.query(sql);
    }
    /**
     * The same columns, backfill, classification and indexes. No trigger: 1764200000002 drops it
     * again, and every insert path names the event id (PostgreSQL would need a trigger function).
     */
    async upPostgres(queryRunner) {
        await runDdl(queryRunner, [
            `ALTER TABLE webhook_outbox ADD COLUMN event_id TEXT`,
            `ALTER TABLE webhook_outbox ADD COLUMN dead_reason TEXT CHECK (dead_reason IN ('transient', 'permanent'))`,
            `ALTER TABLE webhook_outbox ADD COLUMN dead_url TEXT`,
            `UPDATE webhook_outbox SET event_id = gen_random_uuid()::text WHERE event_id IS NULL`,
            `CREATE UNIQUE INDEX webhook_outbox_event_id ON webhook_outbox(event_id)`,
            `UPDATE webhook_outbox SET
         dead_reason = CASE
           WHEN last_error LIKE 'HTTP\\_5__' ESCAPE '\\' OR last_error IN ('HTTP_404', 'HTTP_408') THEN 'transient'
           WHEN last_error LIKE 'HTTP\\_%' ESCAPE '\\' OR last_error IN ('NO_WEBHOOK_URL', 'SECRET_UNREADABLE', 'INVALID_URL') OR last_error IS NULL THEN 'permanent'
           ELSE 'transient' END,
         dead_url = (SELECT c.webhook_url FROM clients c WHERE c.id = webhook_outbox.client_id)
       WHERE state = 'dead'`,
            `CREATE INDEX webhook_outbox_redrive ON webhook_outbox(client_id, dead_url, id) WHERE state = 'dead' AND dead_reason = 'transient'`,
        ]);
    }
    async down(queryRunner) {
        const postgres = dialectOf(queryRunner) === 'postgres';
        for (const sql of [
            `DROP INDEX IF EXISTS webhook_outbox_redrive`,
            postgres ? `DROP TRIGGER IF EXISTS webhook_outbox_event_id_default ON webhook_outbox` : `DROP TRIGGER IF EXISTS webhook_outbox_event_id_default`,
            `DROP INDEX IF EXISTS webhook_outbox_event_id`,
            `ALTER TABLE webhook_outbox DROP COLUMN dead_url`,
            `ALTER TABLE webhook_outbox DROP COLUMN dead_reason`,
            `ALTER TABLE webhook_outbox DROP COLUMN event_id`,
        ]) {
            await queryRunner.query(sql);
        }
    }
}
