/**
 * AuthStore (src/store/sqlite/auth-store.ts) on PostgreSQL: the same methods and semantics, each one
 * statement or one transaction on the pool. Only hashes of tokens reach these tables.
 */
import { toUserWithClient, USER_WITH_CLIENT, type AuthStore, type UserWithClient, type UserWithClientRow } from '../sqlite/auth-store.js';
import type { ClientRow, PersonalAccessTokenRow, RefreshSessionRow, SigningKeyRow } from '../entities.js';
import type { Async } from '../ports.js';
import { changes, inTransaction, row, rows, type PgPool, type PgQueryable } from './pool.js';

const INSERT_REFRESH = `INSERT INTO refresh_sessions (id, user_id, client_id, family_id, token_hash, created_at, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7)`;

function refreshParams(s: Omit<RefreshSessionRow, 'used_at' | 'revoked_at'>): unknown[] {
  return [s.id, s.user_id, s.client_id, s.family_id, s.token_hash, s.created_at, s.expires_at];
}

async function insertedId(db: PgQueryable, sql: string, params: readonly unknown[]): Promise<number> {
  return (await row<{ id: number }>(db, `${sql} RETURNING id`, params))!.id;
}

export class PgAuthStore implements Async<AuthStore> {
  constructor(private readonly pool: PgPool) {}

  clientByName(name: string): Promise<ClientRow | undefined> {
    return row<ClientRow>(this.pool, 'SELECT * FROM clients WHERE name = $1', [name]);
  }

  insertClient(client: { name: string; webhookUrl: string | null; webhookSecretEnc: string | null }, nowMs: number): Promise<number> {
    return insertedId(this.pool, 'INSERT INTO clients (name, active, webhook_url, webhook_secret_enc, created_at) VALUES ($1, 1, $2, $3, $4)',
      [client.name, client.webhookUrl, client.webhookSecretEnc, nowMs]);
  }

  async setWebhook(clientId: number, webhookUrl: string | null, webhookSecretEnc: string | null): Promise<void> {
    await changes(this.pool, 'UPDATE clients SET webhook_url = $1, webhook_secret_enc = $2 WHERE id = $3', [webhookUrl, webhookSecretEnc, clientId]);
  }

  async setClientActive(clientId: number, active: boolean): Promise<void> {
    await changes(this.pool, 'UPDATE clients SET active = $1 WHERE id = $2', [active ? 1 : 0, clientId]);
  }

  insertUser(user: { clientId: number; username: string; passwordHash: string; isAdmin: boolean }, nowMs: number): Promise<number> {
    return insertedId(this.pool, 'INSERT INTO users (client_id, username, password_hash, is_admin, active, created_at) VALUES ($1, $2, $3, $4, 1, $5)',
      [user.clientId, user.username, user.passwordHash, user.isAdmin ? 1 : 0, nowMs]);
  }

  async setUserActive(userId: number, active: boolean): Promise<void> {
    await changes(this.pool, 'UPDATE users SET active = $1 WHERE id = $2', [active ? 1 : 0, userId]);
  }

  async setUserAdmin(userId: number, isAdmin: boolean): Promise<void> {
    await changes(this.pool, 'UPDATE users SET is_admin = $1 WHERE id = $2', [isAdmin ? 1 : 0, userId]);
  }

  async userByUsername(username: string): Promise<UserWithClient | undefined> {
    return toUserWithClient(await row<UserWithClientRow>(this.pool, `${USER_WITH_CLIENT} WHERE u.username = $1`, [username]));
  }

  async userById(userId: number): Promise<UserWithClient | undefined> {
    return toUserWithClient(await row<UserWithClientRow>(this.pool, `${USER_WITH_CLIENT} WHERE u.id = $1`, [userId]));
  }

  insertPat(pat: { userId: number; tokenHash: string; tokenHint: string; expiresAt: number | null }, nowMs: number): Promise<number> {
    return insertedId(this.pool, 'INSERT INTO personal_access_tokens (user_id, token_hash, token_hint, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
      [pat.userId, pat.tokenHash, pat.tokenHint, nowMs, pat.expiresAt]);
  }

  patByHash(tokenHash: string): Promise<PersonalAccessTokenRow | undefined> {
    return row<PersonalAccessTokenRow>(this.pool, 'SELECT * FROM personal_access_tokens WHERE token_hash = $1', [tokenHash]);
  }

  /** Records use at most once per `intervalMs`, so a busy token does not write on every request. */
  async touchPat(patId: number, nowMs: number, intervalMs: number): Promise<void> {
    await changes(this.pool, 'UPDATE personal_access_tokens SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at <= $3)',
      [nowMs, patId, nowMs - intervalMs]);
  }

  async revokePat(patId: number, nowMs: number): Promise<boolean> {
    return (await changes(this.pool, 'UPDATE personal_access_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [nowMs, patId])) === 1;
  }

  async insertRefreshSession(session: Omit<RefreshSessionRow, 'used_at' | 'revoked_at'>): Promise<void> {
    await changes(this.pool, INSERT_REFRESH, refreshParams(session));
  }

  refreshSessionByHash(tokenHash: string): Promise<RefreshSessionRow | undefined> {
    return row<RefreshSessionRow>(this.pool, 'SELECT * FROM refresh_sessions WHERE token_hash = $1', [tokenHash]);
  }

  /**
   * Rotation: marks the presented token used and stores its successor in one transaction. The
   * UPDATE's row lock makes a concurrent rotation of the same token wait, then find it used: false.
   */
  rotateRefreshSession(usedId: string, successor: Omit<RefreshSessionRow, 'used_at' | 'revoked_at'>, nowMs: number): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const marked = await changes(client, 'UPDATE refresh_sessions SET used_at = $1 WHERE id = $2 AND used_at IS NULL AND revoked_at IS NULL', [nowMs, usedId]);
      if (marked !== 1) return false;
      await changes(client, INSERT_REFRESH, refreshParams(successor));
      return true;
    });
  }

  async revokeRefreshFamily(familyId: string, nowMs: number): Promise<void> {
    await changes(this.pool, 'UPDATE refresh_sessions SET revoked_at = $1 WHERE family_id = $2 AND revoked_at IS NULL', [nowMs, familyId]);
  }

  async isRefreshFamilyRevoked(familyId: string): Promise<boolean> {
    return (await row(this.pool, 'SELECT 1 FROM refresh_sessions WHERE family_id = $1 AND revoked_at IS NOT NULL LIMIT 1', [familyId])) !== undefined;
  }

  deleteExpiredRefreshSessions(nowMs: number): Promise<number> {
    return changes(this.pool, 'DELETE FROM refresh_sessions WHERE expires_at < $1', [nowMs]);
  }

  signingKeys(): Promise<SigningKeyRow[]> {
    return rows<SigningKeyRow>(this.pool, 'SELECT * FROM signing_keys ORDER BY created_at, kid COLLATE "C"');
  }

  async insertSigningKey(key: Omit<SigningKeyRow, 'retired_at'>): Promise<void> {
    await changes(this.pool, 'INSERT INTO signing_keys (kid, alg, private_jwk_enc, public_jwk, created_at) VALUES ($1, $2, $3, $4, $5)',
      [key.kid, key.alg, key.private_jwk_enc, key.public_jwk, key.created_at]);
  }

  insertSender(sender: { clientId: number; name: string; type: number }, nowMs: number): Promise<number> {
    return insertedId(this.pool, 'INSERT INTO senders (client_id, name, type, created_at) VALUES ($1, $2, $3, $4)',
      [sender.clientId, sender.name, sender.type, nowMs]);
  }

  sendersOfClient(clientId: number): Promise<{ name: string; type: number }[]> {
    return rows(this.pool, 'SELECT name, type FROM senders WHERE client_id = $1 ORDER BY id', [clientId]);
  }
}
