/**
 * The credit ledger on PostgreSQL: ledger rows and the client's sums written together inside the
 * caller's transaction (a reservation with its campaign row, a charge with its part's outcome), one
 * statement per kind of write. What a change moves is decided in src/accounts/credits.ts.
 */
import { decideReservation, mergeMovements, sumsOf, type CreditMovement, type Reservation } from '../../accounts/credits.js';
import { changes, row, type PgQueryable } from './pool.js';

/** Writes the movements (merged) and their sums: two statements, whatever the batch. */
export async function applyCreditMovements(db: PgQueryable, movements: readonly CreditMovement[], nowMs: number): Promise<void> {
  const merged = mergeMovements(movements);
  if (merged.length === 0) return;
  await changes(db,
    `INSERT INTO credit_ledger (client_id, kind, credits, campaign_id, note, at)
     SELECT client_id, kind, credits, campaign_id, note, $6 FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[])
       AS m(client_id, kind, credits, campaign_id, note)`,
    [merged.map((m) => m.clientId), merged.map((m) => m.kind), merged.map((m) => m.credits), merged.map((m) => m.campaignId),
      merged.map((m) => m.note), nowMs]);
  const sums = sumsOf(merged);
  // A client's first movement gives it a row (and so a balance: it stops being unlimited). Rows
  // are upserted in client id order so two transactions never lock two clients in opposite orders.
  sums.sort((a, b) => a.clientId - b.clientId);
  await changes(db,
    `INSERT INTO client_credits (client_id, unlimited, balance, reserved, updated_at)
     SELECT client_id, 0, balance, reserved, $4 FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS s(client_id, balance, reserved)
     ON CONFLICT (client_id) DO UPDATE SET balance = client_credits.balance + excluded.balance,
       reserved = client_credits.reserved + excluded.reserved, updated_at = excluded.updated_at`,
    [sums.map((s) => s.clientId), sums.map((s) => s.balance), sums.map((s) => s.reserved), nowMs]);
}

/**
 * Reserves `credits` for the campaign if the client has that much available, with its ledger row;
 * an unlimited client reserves nothing. Runs in the caller's transaction (which stores the
 * campaign): the client's row is locked FOR UPDATE first, so concurrent reservations on any node
 * are serialised and available never goes below zero.
 */
export async function reserveCredits(db: PgQueryable, clientId: number, campaignId: string, credits: number, nowMs: number): Promise<Reservation> {
  const account = await row<{ unlimited: number; available: number }>(db,
    'SELECT unlimited, balance - reserved AS available FROM client_credits WHERE client_id = $1 FOR UPDATE', [clientId]);
  const reservation = decideReservation(account, credits);
  if (reservation.outcome === 'reserved' && credits > 0) {
    await applyCreditMovements(db, [{ clientId, kind: 'reserve', credits, campaignId, note: null }], nowMs);
  }
  return reservation;
}
