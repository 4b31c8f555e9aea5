/**
 * CreditStore (src/store/credit-store-port.ts) on SQLite: a client's credits and send rate as the
 * operator changes them. Each method is one transaction, a write an IMMEDIATE one: the write lock is taken at
 * BEGIN, so a balance read and the correction written from it are one unit even while `serve`
 * reserves and charges on the same file. Ledger rows and sums go through SqliteCreditLedger only.
 */
import type { Statement } from 'better-sqlite3';
import { adjustmentOf, correctionTo } from '../../accounts/adjustments.js';
import type { CreditAccount } from '../../accounts/credits.js';
import { GatewayError } from '../../common/errors.js';
import { creditAccountOf, type CreditHistoryEntry } from '../credit-store-port.js';
import type { ClientCreditsRow, CreditLedgerRow } from '../entities.js';
import { SqliteCreditLedger } from './credit-ledger.js';
import type { SqliteDatabase } from './database.js';

type Client = { id: number; name: string };
type Sums = Pick<ClientCreditsRow, 'unlimited' | 'balance' | 'reserved'>;

export class SqliteCreditStore {
  private readonly ledger: SqliteCreditLedger;
  private readonly clientStmt: Statement<[string], Client>;
  private readonly sumsStmt: Statement<[number], Sums>;
  private readonly limitedStmt: Statement<[number, number]>;
  private readonly unlimitedStmt: Statement<[number, number]>;
  private readonly historyStmt: Statement<[number, number], Pick<CreditLedgerRow, 'at' | 'kind' | 'credits' | 'campaign_id' | 'note'>>;
  private readonly setRateStmt: Statement<[number, number, number]>;
  private readonly clearRateStmt: Statement<[number]>;

  constructor(private readonly db: SqliteDatabase) {
    this.ledger = new SqliteCreditLedger(db);
    this.clientStmt = db.prepare('SELECT id, name FROM clients WHERE name = ?');
    this.sumsStmt = db.prepare('SELECT unlimited, balance, reserved FROM client_credits WHERE client_id = ?');
    // A row with zero sums is the empty ledger's: the sums themselves move only by ledger rows.
    this.limitedStmt = db.prepare(
      `INSERT INTO client_credits (client_id, unlimited, balance, reserved, updated_at) VALUES (?, 0, 0, 0, ?)
       ON CONFLICT (client_id) DO UPDATE SET unlimited = 0, updated_at = excluded.updated_at`,
    );
    this.unlimitedStmt = db.prepare(
      `INSERT INTO client_credits (client_id, unlimited, balance, reserved, updated_at) VALUES (?, 1, 0, 0, ?)
       ON CONFLICT (client_id) DO UPDATE SET unlimited = 1, updated_at = excluded.updated_at`,
    );
    this.historyStmt = db.prepare('SELECT at, kind, credits, campaign_id, note FROM credit_ledger WHERE client_id = ? ORDER BY id DESC LIMIT ?');
    // The cell-rate state (next_part_at_us) is kept across a change: the claim paces from it.
    this.setRateStmt = db.prepare(
      `INSERT INTO client_send_rates (client_id, parts_per_second, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (client_id) DO UPDATE SET parts_per_second = excluded.parts_per_second, updated_at = excluded.updated_at`,
    );
    this.clearRateStmt = db.prepare('DELETE FROM client_send_rates WHERE client_id = ?');
  }

  account(clientName: string): CreditAccount {
    return this.db.transaction(() => {
      const client = this.client(clientName);
      return creditAccountOf(client, this.sumsStmt.get(client.id));
    })();
  }

  add(clientName: string, credits: number, note: string | null, nowMs: number): CreditAccount {
    return this.db.transaction(() => {
      const client = this.client(clientName);
      this.limitedStmt.run(client.id, nowMs);
      this.ledger.apply(adjustmentOf(client.id, credits, note), nowMs);
      return creditAccountOf(client, this.sumsStmt.get(client.id));
    }).immediate();
  }

  set(clientName: string, credits: number, nowMs: number): CreditAccount {
    return this.db.transaction(() => {
      const client = this.client(clientName);
      this.limitedStmt.run(client.id, nowMs);
      const balance = (this.sumsStmt.get(client.id) as Sums).balance;
      this.ledger.apply(correctionTo(client.id, balance, credits), nowMs);
      return creditAccountOf(client, this.sumsStmt.get(client.id));
    }).immediate();
  }

  unlimited(clientName: string, nowMs: number): CreditAccount {
    return this.db.transaction(() => {
      const client = this.client(clientName);
      this.unlimitedStmt.run(client.id, nowMs);
      return creditAccountOf(client, this.sumsStmt.get(client.id));
    }).immediate();
  }

  history(clientName: string, limit: number): CreditHistoryEntry[] {
    return this.db.transaction(() => {
      const client = this.client(clientName);
      return this.historyStmt.all(client.id, limit).map((r) => ({ atMs: r.at, kind: r.kind, credits: r.credits, campaignId: r.campaign_id, note: r.note }));
    })();
  }

  setRate(clientName: string, partsPerSecond: number | null, nowMs: number): void {
    this.db.transaction(() => {
      const client = this.client(clientName);
      if (partsPerSecond === null) this.clearRateStmt.run(client.id);
      else this.setRateStmt.run(client.id, partsPerSecond, nowMs);
    }).immediate();
  }

  private client(name: string): Client {
    const client = this.clientStmt.get(name);
    if (client === undefined) throw new GatewayError('CLIENT_NOT_FOUND', `no client named "${name}"`);
    return client;
  }
}
