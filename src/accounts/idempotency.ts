/**
 * Idempotent campaign requests (IETF httpapi draft "The Idempotency-Key HTTP Header Field"): what a
 * request under a key gets, decided once here for both stores (src/store/sqlite/idempotency-store.ts,
 * src/store/postgres/idempotency-store.ts), which read the key's row and write what this decides in
 * one transaction.
 *
 * - the same key, client and body (sha-256 of the raw bytes) within KEY_LIFETIME_MS of the first
 *   use: the first request's 202 and id again (replay), nothing stored, nothing reserved;
 * - the same key with a different body: 422 (mismatch);
 * - a request under the key still in flight: 409 (conflict), until it answers or, if its node died
 *   mid-request, until its hold (IN_FLIGHT_HOLD_MS) has passed and a retry takes the key over;
 * - otherwise the request proceeds and holds the key; a request that fails frees it.
 */
/** The draft leaves the lifetime to the resource: a key answers the same for 24 hours. */
export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

/**
 * How long an unanswered request holds its key against a takeover. Past it the request's node is
 * taken to have died mid-request (kill -9, a lost node): a retry proceeds, and should the first
 * request still finish, its campaign insert finds the key no longer its own and stores nothing.
 */
export const IN_FLIGHT_HOLD_MS = 60_000;

/** The header's value: 1 to 255 printable ASCII characters (the draft's sf-string, bounded). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export type IdempotencyDecision =
  /** Store the request; `claimedAtMs` is the key row's created_at, the token that the campaign insert checks it still holds. */
  | { outcome: 'proceed'; claimedAtMs: number }
  | { outcome: 'replay'; campaignId: string }
  | { outcome: 'conflict' }
  | { outcome: 'mismatch' };

/**
 * The key's idempotency_keys row (src/store/entities.ts IdempotencyKeyRow) as the deciding
 * transaction reads it; undefined: never used, or pruned.
 */
export interface KeyState {
  request_hash: string;
  state: 'in_flight' | 'done';
  campaign_id: string | null;
  created_at: number;
  held_until: number;
}

export function decideIdempotentRequest(existing: KeyState | undefined, requestHash: string, nowMs: number): IdempotencyDecision {
  if (existing === undefined) return { outcome: 'proceed', claimedAtMs: nowMs };
  // A new claim's time is always later than the row it replaces, so the old holder's check fails.
  const takeOver: IdempotencyDecision = { outcome: 'proceed', claimedAtMs: Math.max(nowMs, existing.created_at + 1) };
  if (nowMs - existing.created_at >= KEY_LIFETIME_MS) return takeOver;
  if (existing.state === 'in_flight' && existing.held_until <= nowMs) return takeOver;
  if (existing.request_hash !== requestHash) return { outcome: 'mismatch' };
  if (existing.state === 'in_flight' || existing.campaign_id === null) return { outcome: 'conflict' };
  return { outcome: 'replay', campaignId: existing.campaign_id };
}

/** The row a proceeding request writes for its key (insert, or replace an expired or abandoned one). */
export function inFlightRow(requestHash: string, claimedAtMs: number): KeyState {
  return { request_hash: requestHash, state: 'in_flight', campaign_id: null, created_at: claimedAtMs, held_until: claimedAtMs + IN_FLIGHT_HOLD_MS };
}

/** Whether the key's row is still the one a request claimed (its campaign may then be stored). */
export function stillHeld(existing: Pick<KeyState, 'state' | 'created_at'> | undefined, claimedAtMs: number): boolean {
  return existing !== undefined && existing.state === 'in_flight' && existing.created_at === claimedAtMs;
}
