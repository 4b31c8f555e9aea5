import { runDdl } from './dialect.js';
/**
 * Accounts that pay: message credits, per-client send rates and idempotent campaign requests.
 *
 * - client_credits: a client with a row here has a balance (one without is unlimited, as every
 *   client was before credits existed); `balance` and `reserved` are the sums of credit_ledger,
 *   kept beside it in the same transaction as every ledger row so a check needs no SUM.
 * - credit_ledger: append-only, one row per change. `top-up`, `correction` and `charge` rows change
 *   the balance by `credits` (a charge is negative); `reserve` and `release` rows change what is
 *   reserved by `credits` (a release is negative). Charging a reserved part writes a release and a
 *   charge of the same amount, so each kind moves exactly one sum.
 * - campaigns.credits_reserved: what the campaign reserved when it was accepted (its ledger rows
 *   say what it holds now); NULL for a campaign accepted while its client was unlimited: nothing
 *   reserved, nothing charged.
 * - recipients.credits_per_part and message_parts.credits: the price fixed when the campaign was
 *   processed (0 for an unlimited campaign), so a pricing change later never charges a part other
 *   than what was reserved for it.
 * - client_send_rates: a client's parts-per-second cap and its cell-rate state (GCRA: when its next
 *   part is due), read and advanced in the claim's transaction so the cap holds across transports and across a cluster's nodes.
 * - idempotency_keys: one row per (client, Idempotency-Key), the request's hash and the campaign it
 *   created; `in_flight` until the campaign row commits (held_until bounds how long a crashed
 *   request's key answers 409).
 */
export class Accounts1766100000001 {
    name = 'Accounts1766100000001';
    async up(queryRunner) {
        await runDdl(queryRunner, [
            `CREATE TABLE client_credits (
        client_id INTEGER PRIMARY KEY REFERENCES clients(id) ON DELETE CASCADE,
        unlimited INTEGER NOT NULL DEFAULT 0,
        balance INTEGER NOT NULL DEFAULT 0,
        reserved INTEGER NOT NULL DEFAULT 0,
        low_since INTEGER,
        updated_at INTEGER NOT NULL
      )`,
            `CREATE TABLE credit_ledger (
        id INTEGER PRIMARY KEY,
        client_id INTEGER NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('top-up', 'reserve', 'release', 'charge', 'correction')),
        credits INTEGER NOT NULL,
        campaign_id TEXT,
        note TEXT,
        at INTEGER NOT NULL
      )`,
            // `credits history`: a client's rows newest first.
            `CREATE INDEX credit_ledger_client ON credit_ledger(client_id, id)`,
            `ALTER TABLE campaigns ADD COLUMN credits_reserved INTEGER`,
            `ALTER TABLE recipients ADD COLUMN credits_per_part INTEGER NOT NULL DEFAULT 0`,
            `ALTER TABLE message_parts ADD COLUMN credits INTEGER NOT NULL DEFAULT 0`,
            `CREATE TABLE client_send_rates (
        client_id INTEGER PRIMARY KEY REFERENCES clients(id) ON DELETE CASCADE,
        parts_per_second INTEGER NOT NULL,
        -- GCRA: the theoretical arrival time of the client's next part, microseconds since the epoch
        next_part_at_us INTEGER NOT NULL DEFAULT 0,
        updated_at INTEGER NOT NULL
      )`,
            `CREATE TABLE idempotency_keys (
        client_id INTEGER NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
        campaign_id TEXT,
        created_at INTEGER NOT NULL,
        held_until INTEGER NOT NULL,
        PRIMARY KEY (client_id, key)
      )`,
            // Pruning keys past their 24 hours.
            `CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at)`,
        ]);
    }
    async down(queryRunner) {
        for (const sql of [
            'DROP TABLE idempotency_keys',
            'DROP TABLE client_send_rates',
            'ALTER TABLE message_parts DROP COLUMN credits',
            'ALTER TABLE recipients DROP COLUMN credits_per_part',
            'ALTER TABLE campaigns DROP COLUMN credits_reserved',
            'DROP TABLE credit_ledger',
            'DROP TABLE client_credits',
        ])
            await queryRunner.query(sql);
    }
}
