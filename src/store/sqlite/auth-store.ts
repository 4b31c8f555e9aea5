/**
 * The SQL of accounts and credentials: clients, users, personal access tokens, refresh sessions,
 * signing keys and senders. Prepared statements on the raw better-sqlite3 handle, because every
 * API request authenticates and TypeORM costs more than the query here. Statements are prepared
 * once per store. Only hashes of tokens reach these tables, never a token.
 */
import type { ClientRow, PersonalAccessTokenRow, RefreshSessionRow, SenderRow, SigningKeyRow } from '../entities.js';
import type { SqliteDatabase } from './database.js';

/** A user with the client it belongs to, as authentication needs it. */
export interface UserWithClient {
  userId: number;
  username: string;
  passwordHash: string;
  isAdmin: boolean;
  userActive: boolean;
  clientId: number;
  clientName: string;
  clientActive: boolean;
}

/** A user joined with its client, as USER_WITH_CLIENT selects it (the same text on SQLite and PostgreSQL). */
export interface UserWithClientRow {
  user_id: number;
  username: string;
  password_hash: string;
  is_admin: number;
  user_active: number;
  client_id: number;
  client_name: string;
  client_active: number;
}

export const USER_WITH_CLIENT = `SELECT u.id AS user_id, u.username, u.password_hash, u.is_admin, u.active AS user_active,
  c.id AS client_id, c.name AS client_name, c.active AS client_active
  FROM users u JOIN clients c ON c.id = u.client_id`;

export function toUserWithClient(row: UserWithClientRow | undefined): UserWithClient | undefined {
  if (row === undefined) return undefined;
  return {
    userId: row.user_id, username: row.username, passwordHash: row.password_hash, isAdmin: row.is_admin === 1,
    userActive: row.user_active === 1, clientId: row.client_id, clientName: row.client_name, clientActive: row.client_active === 1,
  };
}

export class AuthStore {
  private readonly statements;

  constructor(readonly db: SqliteDatabase) {
    this.statements = {
      clientByName: db.prepare<[string], ClientRow>('SELECT * FROM clients WHERE name = ?'),
      insertClient: db.prepare<[string, string | null, string | null, number]>(
        'INSERT INTO clients (name, active, webhook_url, webhook_secret_enc, created_at) VALUES (?, 1, ?, ?, ?)'),
      setWebhook: db.prepare<[string | null, string | null, number]>('UPDATE clients SET webhook_url = ?, webhook_secret_enc = ? WHERE id = ?'),
      setClientActive: db.prepare<[number, number]>('UPDATE clients SET active = ? WHERE id = ?'),
      insertUser: db.prepare<[number, string, string, number, number]>(
        'INSERT INTO users (client_id, username, password_hash, is_admin, active, created_at) VALUES (?, ?, ?, ?, 1, ?)'),
      setUserActive: db.prepare<[number, number]>('UPDATE users SET active = ? WHERE id = ?'),
      setUserAdmin: db.prepare<[number, number]>('UPDATE users SET is_admin = ? WHERE id = ?'),
      userByName: db.prepare<[string], UserWithClientRow>(`${USER_WITH_CLIENT} WHERE u.username = ?`),
      userById: db.prepare<[number], UserWithClientRow>(`${USER_WITH_CLIENT} WHERE u.id = ?`),
      insertPat: db.prepare<[number, string, string, number, number | null]>(
        'INSERT INTO personal_access_tokens (user_id, token_hash, token_hint, created_at, expires_at) VALUES (?, ?, ?, ?, ?)'),
      patByHash: db.prepare<[string], PersonalAccessTokenRow>('SELECT * FROM personal_access_tokens WHERE token_hash = ?'),
      touchPat: db.prepare<[number, number, number]>(
        'UPDATE personal_access_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)'),
      revokePat: db.prepare<[number, number]>('UPDATE personal_access_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      insertRefresh: db.prepare<[string, number, string, string, string, number, number]>(
        'INSERT INTO refresh_sessions (id, user_id, client_id, family_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      refreshByHash: db.prepare<[string], RefreshSessionRow>('SELECT * FROM refresh_sessions WHERE token_hash = ?'),
      markRefreshUsed: db.prepare<[number, string]>('UPDATE refresh_sessions SET used_at = ? WHERE id = ? AND used_at IS NULL AND revoked_at IS NULL'),
      revokeFamily: db.prepare<[number, string]>('UPDATE refresh_sessions SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL'),
      familyRevoked: db.prepare<[string], { revoked: number }>(
        'SELECT 1 AS revoked FROM refresh_sessions WHERE family_id = ? AND revoked_at IS NOT NULL LIMIT 1'),
      deleteExpiredRefresh: db.prepare<[number]>('DELETE FROM refresh_sessions WHERE expires_at < ?'),
      signingKeys: db.prepare<[], SigningKeyRow>('SELECT * FROM signing_keys ORDER BY created_at, kid'),
      insertSigningKey: db.prepare<[string, string, string, string, number]>(
        'INSERT INTO signing_keys (kid, alg, private_jwk_enc, public_jwk, created_at) VALUES (?, ?, ?, ?, ?)'),
      insertSender: db.prepare<[number, string, number, number]>('INSERT INTO senders (client_id, name, type, created_at) VALUES (?, ?, ?, ?)'),
      sendersOfClient: db.prepare<[number], Pick<SenderRow, 'name' | 'type'>>('SELECT name, type FROM senders WHERE client_id = ? ORDER BY id'),
    };
  }

  clientByName(name: string): ClientRow | undefined {
    return this.statements.clientByName.get(name);
  }

  insertClient(client: { name: string; webhookUrl: string | null; webhookSecretEnc: string | null }, nowMs: number): number {
    return Number(this.statements.insertClient.run(client.name, client.webhookUrl, client.webhookSecretEnc, nowMs).lastInsertRowid);
  }

  setWebhook(clientId: number, webhookUrl: string | null, webhookSecretEnc: string | null): void {
    this.statements.setWebhook.run(webhookUrl, webhookSecretEnc, clientId);
  }

  setClientActive(clientId: number, active: boolean): void {
    this.statements.setClientActive.run(active ? 1 : 0, clientId);
  }

  insertUser(user: { clientId: number; username: string; passwordHash: string; isAdmin: boolean }, nowMs: number): number {
    return Number(this.statements.insertUser.run(user.clientId, user.username, user.passwordHash, user.isAdmin ? 1 : 0, nowMs).lastInsertRowid);
  }

  setUserActive(userId: number, active: boolean): void {
    this.statements.setUserActive.run(active ? 1 : 0, userId);
  }

  setUserAdmin(userId: number, isAdmin: boolean): void {
    this.statements.setUserAdmin.run(isAdmin ? 1 : 0, userId);
  }

  userByUsername(username: string): UserWithClient | undefined {
    return toUserWithClient(this.statements.userByName.get(username));
  }

  userById(userId: number): UserWithClient | undefined {
    return toUserWithClient(this.statements.userById.get(userId));
  }

  insertPat(pat: { userId: number; tokenHash: string; tokenHint: string; expiresAt: number | null }, nowMs: number): number {
    return Number(this.statements.insertPat.run(pat.userId, pat.tokenHash, pat.tokenHint, nowMs, pat.expiresAt).lastInsertRowid);
  }

  patByHash(tokenHash: string): PersonalAccessTokenRow | undefined {
    return this.statements.patByHash.get(tokenHash);
  }

  /** Records use at most once per `intervalMs`, so a busy token does not write on every request. */
  touchPat(patId: number, nowMs: number, intervalMs: number): void {
    this.statements.touchPat.run(nowMs, patId, nowMs - intervalMs);
  }

  /** True when this call revoked it (false: already revoked). */
  revokePat(patId: number, nowMs: number): boolean {
    return this.statements.revokePat.run(nowMs, patId).changes === 1;
  }

  insertRefreshSession(session: Omit<RefreshSessionRow, 'used_at' | 'revoked_at'>): void {
    const s = session;
    this.statements.insertRefresh.run(s.id, s.user_id, s.client_id, s.family_id, s.token_hash, s.created_at, s.expires_at);
  }

  refreshSessionByHash(tokenHash: string): RefreshSessionRow | undefined {
    return this.statements.refreshByHash.get(tokenHash);
  }

  /**
   * Rotation: marks the presented refresh token used and stores its successor in one transaction.
   * False when the token was used or revoked meanwhile (a concurrent request won the race).
   */
  rotateRefreshSession(usedId: string, successor: Omit<RefreshSessionRow, 'used_at' | 'revoked_at'>, nowMs: number): boolean {
    return this.db.transaction(() => {
      if (this.statements.markRefreshUsed.run(nowMs, usedId).changes !== 1) return false;
      this.insertRefreshSession(successor);
      return true;
    })();
  }

  revokeRefreshFamily(familyId: string, nowMs: number): void {
    this.statements.revokeFamily.run(nowMs, familyId);
  }

  isRefreshFamilyRevoked(familyId: string): boolean {
    return this.statements.familyRevoked.get(familyId) !== undefined;
  }

  /** Sessions past their expiry can never be used again; the used ones are kept until then for reuse detection. */
  deleteExpiredRefreshSessions(nowMs: number): number {
    return this.statements.deleteExpiredRefresh.run(nowMs).changes;
  }

  signingKeys(): SigningKeyRow[] {
    return this.statements.signingKeys.all();
  }

  insertSigningKey(key: Omit<SigningKeyRow, 'retired_at'>): void {
    this.statements.insertSigningKey.run(key.kid, key.alg, key.private_jwk_enc, key.public_jwk, key.created_at);
  }

  insertSender(sender: { clientId: number; name: string; type: number }, nowMs: number): number {
    return Number(this.statements.insertSender.run(sender.clientId, sender.name, sender.type, nowMs).lastInsertRowid);
  }

  sendersOfClient(clientId: number): { name: string; type: number }[] {
    return this.statements.sendersOfClient.all(clientId);
  }
}
