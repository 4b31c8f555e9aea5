import { runDdl } from './dialect.js';
/**
 * The whole first schema: accounts and auth, campaigns and recipients, and the tables the dispatch
 * engine and the webhook sender use, so they land in one order. Never edit after it lands; add a
 * new migration instead.
 *
 * Times: `*_at` columns are INTEGER milliseconds since the Unix epoch (UTC) unless named `*_local`.
 * Booleans are INTEGER 0/1.
 */
export class InitialSchema1763740000000 {
    name = 'InitialSchema1763740000000';
    async up(queryRunner) {
        const statements = [
            `CREATE TABLE clients (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        active INTEGER NOT NULL DEFAULT 1,
        webhook_url TEXT,
        -- AES-256-GCM ciphertext (the secret must be recovered to sign), see src/store/secret-box.ts
        webhook_secret_enc TEXT,
        created_at INTEGER NOT NULL
      )`,
            `CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        client_id INTEGER NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
        username TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        is_admin INTEGER NOT NULL DEFAULT 0,
        active INTEGER NOT NULL DEFAULT 1,
        created_at INTEGER NOT NULL
      )`,
            `CREATE TABLE personal_access_tokens (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_hash TEXT NOT NULL UNIQUE,
        token_hint TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER,
        last_used_at INTEGER
      )`,
            `CREATE TABLE refresh_sessions (
        id TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        client_id TEXT NOT NULL,
        family_id TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER,
        revoked_at INTEGER
      )`,
            `CREATE INDEX refresh_sessions_family ON refresh_sessions(family_id)`,
            `CREATE TABLE signing_keys (
        kid TEXT PRIMARY KEY,
        alg TEXT NOT NULL,
        private_jwk_enc TEXT NOT NULL,
        public_jwk TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        retired_at INTEGER
      )`,
            `CREATE TABLE senders (
        id INTEGER PRIMARY KEY,
        client_id INTEGER NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        type INTEGER NOT NULL CHECK (type IN (0, 1, 2)),
        created_at INTEGER NOT NULL,
        UNIQUE (client_id, name)
      )`,
            `CREATE TABLE campaigns (
        id TEXT PRIMARY KEY,
        client_id INTEGER NOT NULL REFERENCES clients(id),
        user_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
        state TEXT NOT NULL CHECK (state IN ('queued', 'draft', 'processing', 'ready', 'failed')),
        name TEXT NOT NULL,
        sender TEXT NOT NULL,
        text TEXT NOT NULL,
        send_at_local TEXT,
        send_at INTEGER,
        create_as_draft INTEGER NOT NULL DEFAULT 0,
        should_save_list INTEGER NOT NULL DEFAULT 0,
        -- the accepted request's recipientInfo, kept until processing has turned it into recipients
        request_recipients TEXT,
        text_sent TEXT,
        encoding TEXT,
        parts_per_message INTEGER,
        total_sent INTEGER,
        skipped_count INTEGER,
        failure_reason TEXT,
        created_at INTEGER NOT NULL,
        ready_at INTEGER,
        dispatched_at INTEGER
      )`,
            `CREATE INDEX campaigns_state ON campaigns(state, send_at)`,
            `CREATE INDEX campaigns_client ON campaigns(client_id)`,
            `CREATE TABLE recipients (
        id INTEGER PRIMARY KEY,
        campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        msisdn TEXT NOT NULL,
        client_reference TEXT,
        -- waiting: not yet handed to the engine; dispatched: its parts exist in message_parts
        dispatch_state TEXT NOT NULL DEFAULT 'waiting' CHECK (dispatch_state IN ('waiting', 'dispatched')),
        -- summary state per the spec
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'undelivered')),
        -- the receipt status text sent in the webhook (max 30 characters)
        last_status TEXT,
        updated_at INTEGER,
        UNIQUE (campaign_id, msisdn)
      )`,
            `CREATE INDEX recipients_dispatch ON recipients(campaign_id, dispatch_state)`,
            `CREATE INDEX recipients_status ON recipients(campaign_id, status)`,
            `CREATE TABLE message_parts (
        id INTEGER PRIMARY KEY,
        recipient_id INTEGER NOT NULL REFERENCES recipients(id) ON DELETE CASCADE,
        campaign_id TEXT NOT NULL,
        part_number INTEGER NOT NULL,
        parts_total INTEGER NOT NULL,
        concat_reference INTEGER NOT NULL,
        transport TEXT,
        state TEXT NOT NULL CHECK (state IN ('queued', 'submitting', 'submitted', 'delivered', 'undelivered')),
        message_id TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL DEFAULT 0,
        last_status TEXT,
        last_error_code TEXT,
        submitted_at INTEGER,
        final_at INTEGER,
        updated_at INTEGER NOT NULL,
        UNIQUE (recipient_id, part_number)
      )`,
            `CREATE INDEX message_parts_due ON message_parts(state, next_attempt_at)`,
            `CREATE INDEX message_parts_message_id ON message_parts(transport, message_id)`,
            `CREATE TABLE receipts (
        id INTEGER PRIMARY KEY,
        transport TEXT NOT NULL,
        message_id TEXT NOT NULL,
        status TEXT NOT NULL,
        final INTEGER NOT NULL,
        error_code TEXT,
        done_at TEXT,
        raw TEXT NOT NULL,
        received_at INTEGER NOT NULL,
        -- matched: applied to a part; pending: no part with this id yet; expired: never matched
        match_state TEXT NOT NULL CHECK (match_state IN ('matched', 'pending', 'expired')),
        part_id INTEGER REFERENCES message_parts(id) ON DELETE SET NULL
      )`,
            `CREATE INDEX receipts_pending ON receipts(match_state, transport, message_id)`,
            `CREATE TABLE inbound_messages (
        id INTEGER PRIMARY KEY,
        transport TEXT NOT NULL,
        sender TEXT NOT NULL,
        recipient TEXT NOT NULL,
        text TEXT NOT NULL,
        raw TEXT NOT NULL,
        received_at INTEGER NOT NULL
      )`,
            `CREATE TABLE webhook_outbox (
        id INTEGER PRIMARY KEY,
        client_id INTEGER NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
        recipient_id INTEGER REFERENCES recipients(id) ON DELETE SET NULL,
        -- the exact bytes that are signed and sent, serialised once
        body TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        delivered_at INTEGER,
        dead_at INTEGER
      )`,
            `CREATE INDEX webhook_outbox_due ON webhook_outbox(state, next_attempt_at)`,
            `CREATE INDEX webhook_outbox_dead ON webhook_outbox(client_id, state, dead_at)`,
        ];
        await runDdl(queryRunner, statements);
    }
    async down(queryRunner) {
        for (const table of [
            'webhook_outbox', 'inbound_messages', 'receipts', 'message_parts', 'recipients', 'campaigns',
            'senders', 'signing_keys', 'refresh_sessions', 'personal_access_tokens', 'users', 'clients',
        ]) {
            await queryRunner.query(`DROP TABLE IF EXISTS ${table}`);
        }
    }
}
