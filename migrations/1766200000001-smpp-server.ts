import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runDdl } from './dialect.js';

/**
 * The SMPP server for customers: accounts that bind to smsgate, their live binds across a cluster,
 * the messages they submit, and what waits to be delivered back to them.
 *
 * - smpp_accounts: one per system_id, owned by a client (credits, rates, senders and opt-outs are the
 *   client's); the password stored as a hash only; max_binds null for no limit; allow_ips a JSON
 *   array of CIDR blocks (empty: any address).
 * - smpp_server_sessions: every bound customer session on every node, refreshed by its node's
 *   heartbeat, so a bind limit holds across the cluster (a row whose heartbeat is older than the
 *   session timeout belongs to a node that died and no longer counts).
 * - campaigns.smpp_account_id and campaigns.smpp_submit: a submit_sm is stored as a campaign of one
 *   recipient and one part (its id is the message id the customer gets); smpp_submit holds the
 *   customer's cut as JSON (data_coding, concatenation header, registered_delivery) so the part goes
 *   upstream exactly as the customer cut it. Both null for a campaign from the HTTP API.
 * - smpp_deliveries: store and forward towards a customer, one row per deliver_sm to send (a receipt
 *   for a message it submitted, or a mobile-originated message routed to its client); waiting until
 *   a deliver_sm_resp with status 0, then delivered; expired past expires_at (receiptRetentionHours).
 *   Receipts about one message go in id order. leased_by/lease_until: the node sending it now.
 */
export class SmppServer1766200000001 implements MigrationInterface {
  name = 'SmppServer1766200000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await runDdl(queryRunner, [
      `CREATE TABLE smpp_accounts (
        id INTEGER PRIMARY KEY,
        system_id TEXT NOT NULL UNIQUE,
        client_id INTEGER NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
        password_hash TEXT NOT NULL,
        max_binds INTEGER,
        allow_ips TEXT NOT NULL DEFAULT '[]',
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      )`,
      `CREATE TABLE smpp_server_sessions (
        id TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES smpp_accounts(id) ON DELETE CASCADE,
        node_id TEXT NOT NULL,
        bind_type TEXT NOT NULL CHECK (bind_type IN ('transmitter', 'receiver', 'transceiver')),
        address TEXT NOT NULL,
        bound_at INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL
      )`,
      // Counting an account's binds at bind time.
      `CREATE INDEX smpp_server_sessions_account ON smpp_server_sessions(account_id)`,
      `ALTER TABLE campaigns ADD COLUMN smpp_account_id INTEGER REFERENCES smpp_accounts(id) ON DELETE SET NULL`,
      `ALTER TABLE campaigns ADD COLUMN smpp_submit TEXT`,
      `CREATE TABLE smpp_deliveries (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES smpp_accounts(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('receipt', 'inbound')),
        -- the smsgate message id a receipt is about (receipts of one message go in order); null for inbound
        message_id TEXT,
        -- the deliver_sm's fields as JSON (src/smpp-server/contracts.ts DeliverSmFields)
        deliver_sm TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('waiting', 'delivered', 'expired')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        leased_by TEXT,
        lease_until INTEGER,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        done_at INTEGER
      )`,
      // The sender's read: an account's waiting rows oldest first.
      `CREATE INDEX smpp_deliveries_waiting ON smpp_deliveries(account_id, state, id)`,
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const sql of [
      'DROP TABLE smpp_deliveries',
      'ALTER TABLE campaigns DROP COLUMN smpp_submit',
      'ALTER TABLE campaigns DROP COLUMN smpp_account_id',
      'DROP TABLE smpp_server_sessions',
      'DROP TABLE smpp_accounts',
    ]) await queryRunner.query(sql);
  }
}
