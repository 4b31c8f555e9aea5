/**
 * A client's credits and send rate as the operator changes them (`smsgate credits ...`,
 * `smsgate client set-rate`): one interface, a SQLite (src/store/sqlite/credit-store.ts) and a
 * PostgreSQL (src/store/postgres/credit-store.ts) implementation.
 *
 * Contract of every method: one atomic unit of work (one transaction); a client is named, and an
 * unknown name is a CLIENT_NOT_FOUND GatewayError with nothing changed. Every balance change is a
 * ledger row written by the one ledger writer of each backend (SqliteCreditLedger.apply,
 * applyCreditMovements), so balance and reserved stay the ledger's sums.
 */
import type { CreditAccount, CreditKind } from '../accounts/credits.js';

/** One credit_ledger row as `credits history` shows it. */
export interface CreditHistoryEntry {
  /** When it was written, ms since the epoch. */
  atMs: number;
  kind: CreditKind;
  /** Signed: top-up, correction and charge rows move the balance by it; reserve and release rows what is reserved. */
  credits: number;
  campaignId: string | null;
  note: string | null;
}

export interface CreditStore {
  /** The client's account; a client without a balance is unlimited with zero sums. */
  account(clientName: string): Promise<CreditAccount>;
  /**
   * A `top-up` (credits > 0) or `correction` (credits < 0) row of `credits`, never 0. The client
   * then has a balance: a client that was unlimited is limited from now on.
   */
  add(clientName: string, credits: number, note: string | null, nowMs: number): Promise<CreditAccount>;
  /**
   * The balance becomes `credits`: a `correction` row of the difference (none when it is 0). Ends
   * unlimited like add().
   */
  set(clientName: string, credits: number, nowMs: number): Promise<CreditAccount>;
  /**
   * The client sends without a balance again. No ledger row: the sums stay, and what is reserved
   * drains as the campaigns holding it are charged and released.
   */
  unlimited(clientName: string, nowMs: number): Promise<CreditAccount>;
  /** The client's newest `limit` ledger rows, newest first. */
  history(clientName: string, limit: number): Promise<CreditHistoryEntry[]>;
  /** The client's cap in parts a second; null removes it (the client is not rate limited). */
  setRate(clientName: string, partsPerSecond: number | null, nowMs: number): Promise<void>;
}

/** An account from its client_credits row, or undefined: no row, so no balance (unlimited). */
export function creditAccountOf(
  client: { id: number; name: string },
  row: { unlimited: number; balance: number; reserved: number } | undefined,
): CreditAccount {
  if (row === undefined) return { clientId: client.id, client: client.name, unlimited: true, balance: 0, reserved: 0, available: 0 };
  return {
    clientId: client.id,
    client: client.name,
    unlimited: row.unlimited === 1,
    balance: row.balance,
    reserved: row.reserved,
    available: row.balance - row.reserved,
  };
}
