/**
 * Issues and checks the token endpoint's credentials: JWT access tokens signed with the key ring,
 * and opaque refresh tokens (256 random bits, stored as SHA-256) rotated on every use. Refresh
 * tokens of one login form a family (its id is the `session_state` and the JWT `sid`); presenting a
 * refresh token that was already used revokes the whole family, and with it the access tokens of
 * that session (OAuth 2.0 Security BCP, RFC 9700 §4.14.2).
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { AuthStore } from '../store/sqlite/auth-store.js';
import type { Async } from '../store/ports.js';
import type { RefreshSessionRow } from '../store/entities.js';
import { randomToken, sha256Hex } from './secrets.js';
import { JWT_ALGORITHM, type SigningKeyRing } from './signing-keys.js';

/** What one client id gets: its lifetimes and the scope string it is told. */
export interface TokenClientProfile {
  clientId: string;
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
  scope: string;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  sessionState: string;
  expiresInSeconds: number;
  refreshExpiresInSeconds: number;
  scope: string;
}

export type AccessTokenCheck =
  | { ok: true; userId: number; clientId: string; sessionState: string }
  | { ok: false; reason: 'invalid' | 'expired' | 'revoked' };

export type RefreshCheck =
  | { ok: true; session: RefreshSessionRow }
  | { ok: false; reason: 'unknown' | 'wrong-client' | 'expired' | 'revoked' | 'reused' };

interface AccessClaims extends JWTPayload {
  sid?: unknown;
  azp?: unknown;
}

export class TokenIssuer {
  constructor(
    private readonly store: Async<AuthStore>,
    private readonly keys: SigningKeyRing,
    private readonly issuer: string,
  ) {}

  /** A new login: a new refresh family. */
  async issueForLogin(userId: number, username: string, client: TokenClientProfile, nowMs: number): Promise<IssuedTokens> {
    const familyId = randomUUID();
    const refreshToken = await this.storeRefreshToken(userId, client, familyId, nowMs);
    return this.tokens(userId, username, client, familyId, refreshToken, nowMs);
  }

  /** Rotation: the presented session is marked used and a successor in the same family is issued. */
  async issueForRefresh(session: RefreshSessionRow, username: string, client: TokenClientProfile, nowMs: number): Promise<IssuedTokens | undefined> {
    const refreshToken = randomToken();
    const rotated = await this.store.rotateRefreshSession(session.id, this.refreshRow(session.user_id, client, session.family_id, refreshToken, nowMs), nowMs);
    if (!rotated) return undefined;
    return this.tokens(session.user_id, username, client, session.family_id, refreshToken, nowMs);
  }

  async checkRefreshToken(refreshToken: string, clientId: string, nowMs: number): Promise<RefreshCheck> {
    const session = await this.store.refreshSessionByHash(sha256Hex(refreshToken));
    if (session === undefined) return { ok: false, reason: 'unknown' };
    if (session.client_id !== clientId) return { ok: false, reason: 'wrong-client' };
    if (session.revoked_at !== null) return { ok: false, reason: 'revoked' };
    if (session.used_at !== null) {
      // Someone holds a copy of a rotated token: end the session for everyone.
      await this.store.revokeRefreshFamily(session.family_id, nowMs);
      return { ok: false, reason: 'reused' };
    }
    if (session.expires_at <= nowMs) return { ok: false, reason: 'expired' };
    return { ok: true, session };
  }

  revokeFamily(familyId: string, nowMs: number): Promise<void> {
    return this.store.revokeRefreshFamily(familyId, nowMs);
  }

  /** Verifies signature, issuer, audience and expiry, then that the session was not revoked. */
  async checkAccessToken(token: string, audiences: readonly string[], nowMs: number): Promise<AccessTokenCheck> {
    let claims: AccessClaims;
    try {
      const result = await jwtVerify<AccessClaims>(token, async (header) => {
        const key = await this.keys.verificationKey(header.kid);
        if (key === undefined) throw new joseErrors.JWKSNoMatchingKey();
        return key;
      }, {
        algorithms: [JWT_ALGORITHM],
        issuer: this.issuer,
        audience: [...audiences],
        currentDate: new Date(nowMs),
        requiredClaims: ['sub', 'exp', 'iat', 'sid'],
      });
      claims = result.payload;
    } catch (err) {
      return { ok: false, reason: err instanceof joseErrors.JWTExpired ? 'expired' : 'invalid' };
    }
    const userId = Number(claims.sub);
    const clientId = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
    if (!Number.isSafeInteger(userId) || typeof claims.sid !== 'string' || typeof clientId !== 'string') return { ok: false, reason: 'invalid' };
    if (await this.store.isRefreshFamilyRevoked(claims.sid)) return { ok: false, reason: 'revoked' };
    return { ok: true, userId, clientId, sessionState: claims.sid };
  }

  private async storeRefreshToken(userId: number, client: TokenClientProfile, familyId: string, nowMs: number): Promise<string> {
    const refreshToken = randomToken();
    await this.store.insertRefreshSession(this.refreshRow(userId, client, familyId, refreshToken, nowMs));
    return refreshToken;
  }

  private refreshRow(userId: number, client: TokenClientProfile, familyId: string, refreshToken: string, nowMs: number) {
    return {
      id: randomUUID(), user_id: userId, client_id: client.clientId, family_id: familyId, token_hash: sha256Hex(refreshToken),
      created_at: nowMs, expires_at: nowMs + client.refreshTokenSeconds * 1000,
    };
  }

  private async tokens(userId: number, username: string, client: TokenClientProfile, familyId: string, refreshToken: string, nowMs: number): Promise<IssuedTokens> {
    const { kid, privateKey } = this.keys.signingKey();
    const issuedAtSeconds = Math.floor(nowMs / 1000);
    const accessToken = await new SignJWT({ typ: 'Bearer', azp: client.clientId, sid: familyId, scope: client.scope, preferred_username: username })
      .setProtectedHeader({ alg: JWT_ALGORITHM, kid, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setSubject(String(userId))
      .setAudience(client.clientId)
      .setIssuedAt(issuedAtSeconds)
      .setExpirationTime(issuedAtSeconds + client.accessTokenSeconds)
      .setJti(randomUUID())
      .sign(privateKey);
    return {
      accessToken, refreshToken, sessionState: familyId, expiresInSeconds: client.accessTokenSeconds,
      refreshExpiresInSeconds: client.refreshTokenSeconds, scope: client.scope,
    };
  }
}
