import { dialectOf, runDdl } from './dialect.js';
/**
 * Inbound SMS end to end: parts stored as they arrive and joined once complete,
 * routes from an addressed number to a client, the client's inbound webhook URL and opt-out
 * keywords, the suppression list, and an event kind on the one webhook outbox.
 *
 * inbound_messages keeps its first columns; a message gets a public id (MessageId / the API's id),
 * its owning client (NULL: unrouted, kept, never sent to a client) and whether parts were missing.
 */
export class Inbound1764300000001 {
    name = 'Inbound1764300000001';
    async up(queryRunner) {
        const postgres = dialectOf(queryRunner) === 'postgres';
        const statements = [
            `ALTER TABLE clients ADD COLUMN inbound_webhook_url TEXT`,
            // JSON array of trimmed, case-folded keywords; NULL means opt-out keywords are off.
            `ALTER TABLE clients ADD COLUMN optout_keywords TEXT`,
            `ALTER TABLE webhook_outbox ADD COLUMN kind TEXT NOT NULL DEFAULT 'receipt' CHECK (kind IN ('receipt', 'inbound'))`,
            `ALTER TABLE inbound_messages ADD COLUMN public_id TEXT`,
            `ALTER TABLE inbound_messages ADD COLUMN client_id INTEGER REFERENCES clients(id) ON DELETE SET NULL`,
            `ALTER TABLE inbound_messages ADD COLUMN incomplete INTEGER NOT NULL DEFAULT 0`,
            // Rows stored before this migration get an opaque id of the same use.
            postgres
                ? `UPDATE inbound_messages SET public_id = replace(gen_random_uuid()::text, '-', '') WHERE public_id IS NULL`
                : `UPDATE inbound_messages SET public_id = lower(hex(randomblob(16))) WHERE public_id IS NULL`,
            `CREATE UNIQUE INDEX inbound_messages_public_id ON inbound_messages(public_id)`,
            `CREATE INDEX inbound_messages_client ON inbound_messages(client_id, received_at, id)`,
            `CREATE TABLE inbound_routes (
        id INTEGER PRIMARY KEY,
        client_id INTEGER NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
        -- normalised like an msisdn when it is a number (src/inbound/address.ts)
        address TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL
      )`,
            `CREATE TABLE inbound_parts (
        id INTEGER PRIMARY KEY,
        transport TEXT NOT NULL,
        sender TEXT NOT NULL,
        recipient TEXT NOT NULL,
        -- 'udh8' | 'udh16' | 'sar': references of different schemes never mix
        scheme TEXT NOT NULL,
        reference INTEGER NOT NULL,
        total INTEGER NOT NULL,
        sequence INTEGER NOT NULL,
        -- 'gsm7': body is the part's decoded text; 'ucs2' | 'binary': body is the user data as hex
        coding TEXT NOT NULL CHECK (coding IN ('gsm7', 'ucs2', 'binary')),
        body TEXT NOT NULL,
        raw TEXT NOT NULL,
        received_at INTEGER NOT NULL,
        UNIQUE (transport, sender, recipient, scheme, reference, total, sequence)
      )`,
            `CREATE INDEX inbound_parts_age ON inbound_parts(received_at)`,
            `CREATE TABLE optouts (
        client_id INTEGER NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
        msisdn TEXT NOT NULL,
        -- 'keyword' (an inbound message) or 'admin' (smsgate optout add)
        source TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (client_id, msisdn)
      )`,
        ];
        await runDdl(queryRunner, statements);
    }
    async down(queryRunner) {
        for (const sql of [
            `DROP TABLE IF EXISTS optouts`,
            `DROP TABLE IF EXISTS inbound_parts`,
            `DROP TABLE IF EXISTS inbound_routes`,
            `DROP INDEX IF EXISTS inbound_messages_client`,
            `DROP INDEX IF EXISTS inbound_messages_public_id`,
            `ALTER TABLE inbound_messages DROP COLUMN incomplete`,
            `ALTER TABLE inbound_messages DROP COLUMN client_id`,
            `ALTER TABLE inbound_messages DROP COLUMN public_id`,
            `ALTER TABLE webhook_outbox DROP COLUMN kind`,
            `ALTER TABLE clients DROP COLUMN optout_keywords`,
            `ALTER TABLE clients DROP COLUMN inbound_webhook_url`,
        ])
            await queryRunner.query(sql);
    }
}
