/**
 * CreditStore (src/store/credit-store-port.ts) on PostgreSQL: a client's credits and send rate as
 * the operator changes them, from any node. Each method is one transaction; a write first upserts
 * the client's client_credits row, which locks it, so a balance read and the correction written
 * from it are one unit against every node's reservations and charges (they lock the same row).
 * Ledger rows and sums go through applyCreditMovements only.
 */
import { adjustmentOf, correctionTo } from '../../accounts/adjustments.js';
import type { CreditAccount } from '../../accounts/credits.js';
import { GatewayError } from '../../common/errors.js';
import { creditAccountOf, type CreditHistoryEntry, type CreditStore } from '../credit-store-port.js';
import type { ClientCreditsRow, CreditLedgerRow } from '../entities.js';
import { applyCreditMovements } from './credit-ledger.js';
import { changes, inTransaction, row, rows, type PgPool, type PgQueryable } from './pool.js';

type Client = { id: number; name: string };
type Sums = Pick<ClientCreditsRow, 'unlimited' | 'balance' | 'reserved'>;

const SUMS = 'SELECT unlimited, balance, reserved FROM client_credits WHERE client_id = $1';
// A row with zero sums is the empty ledger's: the sums themselves move only by ledger rows.
const LIMITED = `INSERT INTO client_credits (client_id, unlimited, balance, reserved, updated_at) VALUES ($1, 0, 0, 0, $2)
  ON CONFLICT (client_id) DO UPDATE SET unlimited = 0, updated_at = excluded.updated_at`;
const UNLIMITED = `INSERT INTO client_credits (client_id, unlimited, balance, reserved, updated_at) VALUES ($1, 1, 0, 0, $2)
  ON CONFLICT (client_id) DO UPDATE SET unlimited = 1, updated_at = excluded.updated_at`;

export class PgCreditStore implements CreditStore {
  constructor(private readonly pool: PgPool) {}

  account(clientName: string): Promise<CreditAccount> {
    return inTransaction(this.pool, async (db) => {
      const client = await clientNamed(db, clientName);
      return creditAccountOf(client, await row<Sums>(db, SUMS, [client.id]));
    });
  }

  add(clientName: string, credits: number, note: string | null, nowMs: number): Promise<CreditAccount> {
    return inTransaction(this.pool, async (db) => {
      const client = await clientNamed(db, clientName);
      await changes(db, LIMITED, [client.id, nowMs]);
      await applyCreditMovements(db, adjustmentOf(client.id, credits, note), nowMs);
      return creditAccountOf(client, await row<Sums>(db, SUMS, [client.id]));
    });
  }

  set(clientName: string, credits: number, nowMs: number): Promise<CreditAccount> {
    return inTransaction(this.pool, async (db) => {
      const client = await clientNamed(db, clientName);
      // The upsert holds the row's lock to COMMIT: no reservation or charge moves the balance in between.
      await changes(db, LIMITED, [client.id, nowMs]);
      const { balance } = (await row<Sums>(db, SUMS, [client.id])) as Sums;
      await applyCreditMovements(db, correctionTo(client.id, balance, credits), nowMs);
      return creditAccountOf(client, await row<Sums>(db, SUMS, [client.id]));
    });
  }

  unlimited(clientName: string, nowMs: number): Promise<CreditAccount> {
    return inTransaction(this.pool, async (db) => {
      const client = await clientNamed(db, clientName);
      await changes(db, UNLIMITED, [client.id, nowMs]);
      return creditAccountOf(client, await row<Sums>(db, SUMS, [client.id]));
    });
  }

  history(clientName: string, limit: number): Promise<CreditHistoryEntry[]> {
    return inTransaction(this.pool, async (db) => {
      const client = await clientNamed(db, clientName);
      const found = await rows<Pick<CreditLedgerRow, 'at' | 'kind' | 'credits' | 'campaign_id' | 'note'>>(db,
        'SELECT at, kind, credits, campaign_id, note FROM credit_ledger WHERE client_id = $1 ORDER BY id DESC LIMIT $2', [client.id, limit]);
      return found.map((r) => ({ atMs: r.at, kind: r.kind, credits: r.credits, campaignId: r.campaign_id, note: r.note }));
    });
  }

  setRate(clientName: string, partsPerSecond: number | null, nowMs: number): Promise<void> {
    return inTransaction(this.pool, async (db) => {
      const client = await clientNamed(db, clientName);
      if (partsPerSecond === null) {
        await changes(db, 'DELETE FROM client_send_rates WHERE client_id = $1', [client.id]);
        return;
      }
      // The cell-rate state (next_part_at_us) is kept across a change: the claim paces from it.
      await changes(db,
        `INSERT INTO client_send_rates (client_id, parts_per_second, updated_at) VALUES ($1, $2, $3)
         ON CONFLICT (client_id) DO UPDATE SET parts_per_second = excluded.parts_per_second, updated_at = excluded.updated_at`,
        [client.id, partsPerSecond, nowMs]);
    });
  }
}

async function clientNamed(db: PgQueryable, name: string): Promise<Client> {
  const client = await row<Client>(db, 'SELECT id, name FROM clients WHERE name = $1', [name]);
  if (client === undefined) throw new GatewayError('CLIENT_NOT_FOUND', `no client named "${name}"`);
  return client;
}
