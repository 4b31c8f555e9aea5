/**
 * Idempotency keys of POST /v1/campaign on SQLite (table idempotency_keys). What a request under a
 * key gets is decided by decideIdempotentRequest (src/accounts/idempotency.ts); this store reads
 * the key's row and writes the decision in one IMMEDIATE transaction, so two requests under one key
 * never both proceed. The key is marked done by the campaign insert itself (IdempotencyKeyGuard,
 * in the campaign row's transaction): a campaign is stored only while its request still holds the
 * key, and a stored campaign's key never stays in flight.
 *
 * Its port is `Async<IdempotencyStore>`; PostgreSQL's PgIdempotencyStore implements the same.
 */
import type { Statement } from 'better-sqlite3';
import { decideIdempotentRequest, inFlightRow, KEY_LIFETIME_MS, stillHeld, type IdempotencyDecision, type KeyState } from '../../accounts/idempotency.js';
import type { SqliteDatabase } from './database.js';

/** Expired keys deleted per claim: the table stays bounded without a sweeper, and a claim stays short. */
export const EXPIRED_KEYS_PRUNED_PER_CLAIM = 16;

/** The key a campaign insert must still hold, and marks done with its campaign id. */
export interface HeldKey {
  key: string;
  claimedAtMs: number;
}

/** The statements a campaign insert runs on the key, inside its own transaction. */
export class IdempotencyKeyGuard {
  private readonly readStmt: Statement<[number, string], KeyState>;
  private readonly completeStmt: Statement<[string, number, string]>;

  constructor(db: SqliteDatabase) {
    this.readStmt = db.prepare('SELECT request_hash, state, campaign_id, created_at, held_until FROM idempotency_keys WHERE client_id = ? AND key = ?');
    this.completeStmt = db.prepare(`UPDATE idempotency_keys SET state = 'done', campaign_id = ? WHERE client_id = ? AND key = ?`);
  }

  read(clientId: number, key: string): KeyState | undefined {
    return this.readStmt.get(clientId, key);
  }

  /** Whether the request that claimed the key at claimedAtMs still holds it (not taken over after its hold). */
  holds(clientId: number, held: HeldKey): boolean {
    return stillHeld(this.read(clientId, held.key), held.claimedAtMs);
  }

  /** Marks the key done with its campaign; only after holds() said yes, in the same transaction. */
  complete(clientId: number, key: string, campaignId: string): void {
    this.completeStmt.run(campaignId, clientId, key);
  }
}

export class IdempotencyStore {
  private readonly guard: IdempotencyKeyGuard;
  private readonly pruneStmt: Statement<[number, number]>;
  private readonly writeStmt: Statement<[number, string, string, number, number]>;
  private readonly releaseStmt: Statement<[number, string, number]>;

  constructor(private readonly db: SqliteDatabase) {
    this.guard = new IdempotencyKeyGuard(db);
    this.pruneStmt = db.prepare('DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE created_at <= ? LIMIT ?)');
    this.writeStmt = db.prepare(
      `INSERT INTO idempotency_keys (client_id, key, request_hash, state, campaign_id, created_at, held_until)
       VALUES (?, ?, ?, 'in_flight', NULL, ?, ?)
       ON CONFLICT (client_id, key) DO UPDATE SET request_hash = excluded.request_hash, state = 'in_flight', campaign_id = NULL,
         created_at = excluded.created_at, held_until = excluded.held_until`,
    );
    this.releaseStmt = db.prepare(`DELETE FROM idempotency_keys WHERE client_id = ? AND key = ? AND state = 'in_flight' AND created_at = ?`);
  }

  /**
   * What a request under `key` gets; when it proceeds it now holds the key (in flight). One
   * IMMEDIATE transaction: the read and the write are one unit against every other writer.
   */
  claim(clientId: number, key: string, requestHash: string, nowMs: number): IdempotencyDecision {
    return this.db.transaction((): IdempotencyDecision => {
      this.pruneStmt.run(nowMs - KEY_LIFETIME_MS, EXPIRED_KEYS_PRUNED_PER_CLAIM);
      const decision = decideIdempotentRequest(this.guard.read(clientId, key), requestHash, nowMs);
      if (decision.outcome === 'proceed') {
        const row = inFlightRow(requestHash, decision.claimedAtMs);
        this.writeStmt.run(clientId, key, row.request_hash, row.created_at, row.held_until);
      }
      return decision;
    }).immediate();
  }

  /** Frees a key whose request failed (400, 503), so a retry can succeed; only the claim's own row. */
  release(clientId: number, key: string, claimedAtMs: number): void {
    this.releaseStmt.run(clientId, key, claimedAtMs);
  }
}
