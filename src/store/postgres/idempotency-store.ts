/**
 * IdempotencyStore (src/store/sqlite/idempotency-store.ts) on PostgreSQL, for every node of a
 * cluster at once. The key row's INSERT ... ON CONFLICT DO NOTHING decides who owns a fresh key: of
 * two nodes inserting it together, the second waits for the first to commit and inserts nothing. A
 * request that did not insert reads the row FOR UPDATE and decideIdempotentRequest
 * (src/accounts/idempotency.ts) says what it gets; a takeover (the key expired, or its request's
 * node died past the hold) rewrites the row under that lock.
 */
import { decideIdempotentRequest, inFlightRow, KEY_LIFETIME_MS, stillHeld, type IdempotencyDecision, type KeyState } from '../../accounts/idempotency.js';
import type { Async } from '../ports.js';
import { EXPIRED_KEYS_PRUNED_PER_CLAIM, type HeldKey, type IdempotencyStore } from '../sqlite/idempotency-store.js';
import { changes, inTransaction, row, type PgPool, type PgQueryable } from './pool.js';

export class PgIdempotencyStore implements Async<IdempotencyStore> {
  constructor(private readonly pool: PgPool) {}

  claim(clientId: number, key: string, requestHash: string, nowMs: number): Promise<IdempotencyDecision> {
    return inTransaction(this.pool, async (client) => {
      // SKIP LOCKED: two nodes pruning at once take different rows instead of waiting on each other.
      await changes(client,
        `DELETE FROM idempotency_keys WHERE (client_id, key) IN (
           SELECT client_id, key FROM idempotency_keys WHERE created_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [nowMs - KEY_LIFETIME_MS, EXPIRED_KEYS_PRUNED_PER_CLAIM]);
      const fresh = inFlightRow(requestHash, nowMs);
      const inserted = await changes(client,
        `INSERT INTO idempotency_keys (client_id, key, request_hash, state, campaign_id, created_at, held_until)
         VALUES ($1, $2, $3, 'in_flight', NULL, $4, $5) ON CONFLICT (client_id, key) DO NOTHING`,
        [clientId, key, fresh.request_hash, fresh.created_at, fresh.held_until]);
      if (inserted === 1) return decideIdempotentRequest(undefined, requestHash, nowMs);
      const decision = decideIdempotentRequest(await readKey(client, clientId, key), requestHash, nowMs);
      if (decision.outcome === 'proceed') {
        const taken = inFlightRow(requestHash, decision.claimedAtMs);
        await changes(client,
          `UPDATE idempotency_keys SET request_hash = $3, state = 'in_flight', campaign_id = NULL, created_at = $4, held_until = $5
           WHERE client_id = $1 AND key = $2`,
          [clientId, key, taken.request_hash, taken.created_at, taken.held_until]);
      }
      return decision;
    });
  }

  async release(clientId: number, key: string, claimedAtMs: number): Promise<void> {
    await changes(this.pool, `DELETE FROM idempotency_keys WHERE client_id = $1 AND key = $2 AND state = 'in_flight' AND created_at = $3`,
      [clientId, key, claimedAtMs]);
  }
}

/** The key's row, locked FOR UPDATE to the end of the caller's transaction. */
async function readKey(db: PgQueryable, clientId: number, key: string): Promise<KeyState | undefined> {
  return row<KeyState>(db,
    'SELECT request_hash, state, campaign_id, created_at, held_until FROM idempotency_keys WHERE client_id = $1 AND key = $2 FOR UPDATE',
    [clientId, key]);
}

/** In the campaign insert's transaction: whether its request still holds the key (the row stays locked). */
export async function holdsKey(db: PgQueryable, clientId: number, held: HeldKey): Promise<boolean> {
  return stillHeld(await readKey(db, clientId, held.key), held.claimedAtMs);
}

/** In the campaign insert's transaction, after holdsKey: the key done, answering with this campaign from now on. */
export async function completeKey(db: PgQueryable, clientId: number, key: string, campaignId: string): Promise<void> {
  await changes(db, `UPDATE idempotency_keys SET state = 'done', campaign_id = $3 WHERE client_id = $1 AND key = $2`, [clientId, key, campaignId]);
}
