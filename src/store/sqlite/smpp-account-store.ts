/**
 * SmppAccountStore and SmppSessionRegistry (src/store/smpp-account-port.ts) on SQLite. One `serve`
 * holds a SQLite file (src/store/sqlite/serve-lock.ts), so a bind limit is atomic with an
 * IMMEDIATE transaction: the write lock is taken at BEGIN, the count and the insert are one unit,
 * and an admin command on the same file waits its turn.
 */
import type { Statement } from 'better-sqlite3';
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
  type SmppAccountWithClientRow,
  type SmppBindCredentials,
} from '../smpp-account-port.js';
import { isUniqueViolation } from '../unique-violation.js';
import type { SqliteDatabase } from './database.js';


export class SqliteSmppAccountStore {
  private readonly clientStmt: Statement<[string], { id: number }>;
  private readonly insertStmt: Statement<[string, number, string, number | null, string, number, number]>;
  private readonly bySystemIdStmt: Statement<[string], SmppAccountWithClientRow>;
  private readonly listStmt: Statement<[], SmppAccountWithClientRow>;
  private readonly removeStmt: Statement<[string]>;
  private readonly setPasswordStmt: Statement<[string, number, string]>;

  constructor(private readonly db: SqliteDatabase) {
    this.clientStmt = db.prepare('SELECT id FROM clients WHERE name = ?');
    this.insertStmt = db.prepare(
      `INSERT INTO smpp_accounts (system_id, client_id, password_hash, max_binds, allow_ips, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.bySystemIdStmt = db.prepare(`${ACCOUNT_WITH_CLIENT} WHERE a.system_id = ?`);
    this.listStmt = db.prepare(`${ACCOUNT_WITH_CLIENT} ORDER BY a.system_id`);
    this.removeStmt = db.prepare('DELETE FROM smpp_accounts WHERE system_id = ?');
    this.setPasswordStmt = db.prepare('UPDATE smpp_accounts SET password_hash = ?, updated_at = ? WHERE system_id = ?');
  }

  add(account: NewSmppAccount, nowMs: number): SmppAccountListing {
    return this.db.transaction(() => {
      const client = this.clientStmt.get(account.clientName);
      if (client === undefined) throw new GatewayError('CLIENT_NOT_FOUND', `no client named "${account.clientName}"`);
      try {
        this.insertStmt.run(account.systemId, client.id, account.passwordHash, account.maxBinds, JSON.stringify(account.allowIps), nowMs, nowMs);
      } catch (err) {
        if (isUniqueViolation(err)) throw smppAccountExists(account.systemId);
        throw err;
      }
      return smppAccountListingOf(this.bySystemIdStmt.get(account.systemId) as SmppAccountWithClientRow);
    }).immediate();
  }

  list(): SmppAccountListing[] {
    return this.listStmt.all().map(smppAccountListingOf);
  }

  remove(systemId: string): void {
    if (this.removeStmt.run(systemId).changes === 0) throw smppAccountNotFound(systemId);
  }

  setPassword(systemId: string, passwordHash: string, nowMs: number): void {
    if (this.setPasswordStmt.run(passwordHash, nowMs, systemId).changes === 0) throw smppAccountNotFound(systemId);
  }

  findForBind(systemId: string): SmppBindCredentials | undefined {
    const row = this.bySystemIdStmt.get(systemId);
    return row === undefined ? undefined : smppBindCredentialsOf(row);
  }
}

export class SqliteSmppSessionRegistry {
  private readonly accountStmt: Statement<[number], { id: number }>;
  private readonly dropStaleStmt: Statement<[number, number]>;
  private readonly countLiveStmt: Statement<[number, number], { n: number }>;
  private readonly insertStmt: Statement<[string, number, string, string, string, number, number]>;
  private readonly heartbeatStmt: Statement<[number, string, string], { id: string }>;
  private readonly unregisterStmt: Statement<[string]>;
  private readonly removeNodeStmt: Statement<[string]>;
  private readonly listLiveStmt: Statement<[number], LiveServerSession>;

  constructor(private readonly db: SqliteDatabase) {
    this.accountStmt = db.prepare('SELECT id FROM smpp_accounts WHERE id = ?');
    this.dropStaleStmt = db.prepare('DELETE FROM smpp_server_sessions WHERE account_id = ? AND heartbeat_at < ?');
    this.countLiveStmt = db.prepare('SELECT COUNT(*) AS n FROM smpp_server_sessions WHERE account_id = ? AND heartbeat_at >= ?');
    this.insertStmt = db.prepare(
      `INSERT INTO smpp_server_sessions (id, account_id, node_id, bind_type, address, bound_at, heartbeat_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    // Ids go in as one JSON array (json_each), so one statement covers any number of sessions.
    this.heartbeatStmt = db.prepare(
      'UPDATE smpp_server_sessions SET heartbeat_at = ? WHERE node_id = ? AND id IN (SELECT value FROM json_each(?)) RETURNING id',
    );
    this.unregisterStmt = db.prepare('DELETE FROM smpp_server_sessions WHERE id = ?');
    this.removeNodeStmt = db.prepare('DELETE FROM smpp_server_sessions WHERE node_id = ?');
    this.listLiveStmt = db.prepare(`${LIVE_SESSIONS} WHERE s.heartbeat_at >= ? ORDER BY s.bound_at, s.id`);
  }

  tryRegister(row: SmppServerSessionRow, maxBinds: number | null, staleBeforeMs: number): boolean {
    return this.db.transaction(() => {
      if (this.accountStmt.get(row.account_id) === undefined) throw smppAccountRemoved(row.account_id);
      this.dropStaleStmt.run(row.account_id, staleBeforeMs);
      const live = (this.countLiveStmt.get(row.account_id, staleBeforeMs) as { n: number }).n;
      if (!bindSlotFree(live, maxBinds)) return false;
      this.insertStmt.run(row.id, row.account_id, row.node_id, row.bind_type, row.address, row.bound_at, row.heartbeat_at);
      return true;
    }).immediate();
  }

  heartbeat(nodeId: string, sessionIds: readonly string[], nowMs: number): string[] {
    if (sessionIds.length === 0) return [];
    const refreshed = this.heartbeatStmt.all(nowMs, nodeId, JSON.stringify(sessionIds)).map((r) => r.id);
    return missingSessions(sessionIds, refreshed);
  }

  unregister(sessionId: string): void {
    this.unregisterStmt.run(sessionId);
  }

  removeNode(nodeId: string): number {
    return this.removeNodeStmt.run(nodeId).changes;
  }

  listLive(staleBeforeMs: number): LiveServerSession[] {
    return this.listLiveStmt.all(staleBeforeMs);
  }
}
