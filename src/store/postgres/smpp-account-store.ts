/**
 * SmppAccountStore and SmppSessionRegistry (src/store/smpp-account-port.ts) on PostgreSQL, for
 * every node of a cluster. A bind limit holds across the nodes because tryRegister locks the
 * account's row (FOR UPDATE) before it counts: two nodes binding the same account queue on that
 * lock, and the second counts the first one's committed row.
 */
import { GatewayError } from '../../common/errors.js';
import type { SmppServerSessionRow } from '../entities.js';
import {
  ACCOUNT_WITH_CLIENT,
  bindSlotFree,
  LIVE_SESSIONS,
  missingSessions,
  smppAccountExists,
  smppAccountListingOf,
  smppAccountNotFound,
  smppAccountRemoved,
  smppBindCredentialsOf,
  type LiveServerSession,
  type NewSmppAccount,
  type SmppAccountListing,
  type SmppAccountStore,
  type SmppAccountWithClientRow,
  type SmppBindCredentials,
  type SmppSessionRegistry,
} from '../smpp-account-port.js';
import { isUniqueViolation } from '../unique-violation.js';
import { changes, inTransaction, row, rows, type PgPool } from './pool.js';

export class PgSmppAccountStore implements SmppAccountStore {
  constructor(private readonly pool: PgPool) {}

  add(account: NewSmppAccount, nowMs: number): Promise<SmppAccountListing> {
    return inTransaction(this.pool, async (db) => {
      const client = await row<{ id: number }>(db, 'SELECT id FROM clients WHERE name = $1', [account.clientName]);
      if (client === undefined) throw new GatewayError('CLIENT_NOT_FOUND', `no client named "${account.clientName}"`);
      try {
        await changes(db,
          `INSERT INTO smpp_accounts (system_id, client_id, password_hash, max_binds, allow_ips, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $6)`,
          [account.systemId, client.id, account.passwordHash, account.maxBinds, JSON.stringify(account.allowIps), nowMs]);
      } catch (err) {
        if (isUniqueViolation(err)) throw smppAccountExists(account.systemId);
        throw err;
      }
      return smppAccountListingOf(await row<SmppAccountWithClientRow>(db, `${ACCOUNT_WITH_CLIENT} WHERE a.system_id = $1`, [account.systemId]) as SmppAccountWithClientRow);
    });
  }

  /** In byte order, as SQLite's BINARY collation sorts, whatever the database's locale. */
  async list(): Promise<SmppAccountListing[]> {
    return (await rows<SmppAccountWithClientRow>(this.pool, `${ACCOUNT_WITH_CLIENT} ORDER BY a.system_id COLLATE "C"`)).map(smppAccountListingOf);
  }

  async remove(systemId: string): Promise<void> {
    if ((await changes(this.pool, 'DELETE FROM smpp_accounts WHERE system_id = $1', [systemId])) === 0) throw smppAccountNotFound(systemId);
  }

  async setPassword(systemId: string, passwordHash: string, nowMs: number): Promise<void> {
    const updated = await changes(this.pool, 'UPDATE smpp_accounts SET password_hash = $1, updated_at = $2 WHERE system_id = $3', [passwordHash, nowMs, systemId]);
    if (updated === 0) throw smppAccountNotFound(systemId);
  }

  async findForBind(systemId: string): Promise<SmppBindCredentials | undefined> {
    const found = await row<SmppAccountWithClientRow>(this.pool, `${ACCOUNT_WITH_CLIENT} WHERE a.system_id = $1`, [systemId]);
    return found === undefined ? undefined : smppBindCredentialsOf(found);
  }
}

export class PgSmppSessionRegistry implements SmppSessionRegistry {
  constructor(private readonly pool: PgPool) {}

  tryRegister(session: SmppServerSessionRow, maxBinds: number | null, staleBeforeMs: number): Promise<boolean> {
    return inTransaction(this.pool, async (db) => {
      // The account row's lock orders every node's registration for this account (to COMMIT).
      const account = await row<{ id: number }>(db, 'SELECT id FROM smpp_accounts WHERE id = $1 FOR UPDATE', [session.account_id]);
      if (account === undefined) throw smppAccountRemoved(session.account_id);
      await changes(db, 'DELETE FROM smpp_server_sessions WHERE account_id = $1 AND heartbeat_at < $2', [session.account_id, staleBeforeMs]);
      const counted = await row<{ n: number }>(db,
        'SELECT COUNT(*)::int AS n FROM smpp_server_sessions WHERE account_id = $1 AND heartbeat_at >= $2', [session.account_id, staleBeforeMs]);
      if (!bindSlotFree(counted?.n ?? 0, maxBinds)) return false;
      await changes(db,
        `INSERT INTO smpp_server_sessions (id, account_id, node_id, bind_type, address, bound_at, heartbeat_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [session.id, session.account_id, session.node_id, session.bind_type, session.address, session.bound_at, session.heartbeat_at]);
      return true;
    });
  }

  async heartbeat(nodeId: string, sessionIds: readonly string[], nowMs: number): Promise<string[]> {
    if (sessionIds.length === 0) return [];
    const refreshed = await rows<{ id: string }>(this.pool,
      'UPDATE smpp_server_sessions SET heartbeat_at = $1 WHERE node_id = $2 AND id = ANY($3::text[]) RETURNING id', [nowMs, nodeId, [...sessionIds]]);
    return missingSessions(sessionIds, refreshed.map((r) => r.id));
  }

  async unregister(sessionId: string): Promise<void> {
    await changes(this.pool, 'DELETE FROM smpp_server_sessions WHERE id = $1', [sessionId]);
  }

  removeNode(nodeId: string): Promise<number> {
    return changes(this.pool, 'DELETE FROM smpp_server_sessions WHERE node_id = $1', [nodeId]);
  }

  listLive(staleBeforeMs: number): Promise<LiveServerSession[]> {
    return rows<LiveServerSession>(this.pool, `${LIVE_SESSIONS} WHERE s.heartbeat_at >= $1 ORDER BY s.bound_at, s.id`, [staleBeforeMs]);
  }
}
