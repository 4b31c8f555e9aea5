/**
 * The credit ledger on SQLite: ledger rows and the client's sums written together, always inside
 * the caller's transaction (a reservation with its campaign row, a charge with its part's outcome),
 * so the sums equal the ledger's after a crash at any moment. What a change moves is decided in
 * src/accounts/credits.ts.
 */
import type { Statement } from 'better-sqlite3';
import { decideReservation, mergeMovements, sumsOf, type CreditMovement, type Reservation } from '../../accounts/credits.js';
import type { SqliteDatabase } from './database.js';
import { MultiRowInsert } from './multi-row-insert.js';

export class SqliteCreditLedger {
  private readonly insertRows: MultiRowInsert<CreditMovement & { at: number }>;
  private readonly addSums: Statement<[number, number, number, number]>;
  private readonly accountStmt: Statement<[number], { unlimited: number; available: number }>;

  constructor(db: SqliteDatabase) {
    this.insertRows = new MultiRowInsert(db, 'INSERT INTO credit_ledger (client_id, kind, credits, campaign_id, note, at) VALUES', '(?, ?, ?, ?, ?, ?)',
      (m) => [m.clientId, m.kind, m.credits, m.campaignId, m.note, m.at]);
    // A client's first movement gives it a row (and so a balance: it stops being unlimited).
    this.addSums = db.prepare(
      `INSERT INTO client_credits (client_id, unlimited, balance, reserved, updated_at) VALUES (?, 0, ?, ?, ?)
       ON CONFLICT (client_id) DO UPDATE SET balance = balance + excluded.balance, reserved = reserved + excluded.reserved,
         updated_at = excluded.updated_at`,
    );
    this.accountStmt = db.prepare('SELECT unlimited, balance - reserved AS available FROM client_credits WHERE client_id = ?');
  }

  /** Writes the movements (merged) and their sums. Runs in the caller's transaction. */
  apply(movements: readonly CreditMovement[], nowMs: number): void {
    const merged = mergeMovements(movements);
    if (merged.length === 0) return;
    this.insertRows.run(merged.map((m) => ({ ...m, at: nowMs })));
    for (const s of sumsOf(merged)) this.addSums.run(s.clientId, s.balance, s.reserved, nowMs);
  }

  /**
   * Reserves `credits` for the campaign if the client has that much available, with its ledger
   * row; an unlimited client (no client_credits row, or one marked unlimited) reserves nothing.
   * Runs in the caller's transaction, which stores the campaign too; it must be an IMMEDIATE one
   * (`db.transaction(fn).immediate()`): the check and the write are then one unit even against a
   * `smsgate credits` command writing the same file.
   */
  reserve(clientId: number, campaignId: string, credits: number, nowMs: number): Reservation {
    const account = this.accountStmt.get(clientId);
    const reservation = decideReservation(account, credits);
    if (reservation.outcome === 'reserved' && credits > 0) {
      this.apply([{ clientId, kind: 'reserve', credits, campaignId, note: null }], nowMs);
    }
    return reservation;
  }
}
