/**
 * The one entry point of authentication: bearer tokens (personal access tokens and JWTs from the
 * token endpoints) to identities, the token endpoints themselves, and account administration.
 *
 * Audiences: 'current' (the v1 campaign API) accepts PATs and JWTs issued to the current client id
 * (messaging-api). 'legacy' (the v2 sender list) accepts JWTs of the legacy client id, and also PATs
 * and current JWTs: the sender list is read-only, and one credential for both APIs is what an
 * integration moving from v2 to v1 expects.
 */
import type { AuthConfig } from '../config/types.js';
import { silentLogger, type Logger } from '../common/log.js';
import type { AuthStore } from '../store/sqlite/auth-store.js';
import type { Async } from '../store/ports.js';
import type { SecretBox } from '../store/secret-box.js';
import { Accounts } from './accounts.js';
import { looksLikeJwt, readBearerToken } from './bearer.js';
import { FailureLimiter } from './failure-limiter.js';
import { DEFAULT_SCRYPT_COST, hashPassword, verifyPassword, type ScryptCost } from './password.js';
import { hashPat, isWellFormedPat, looksLikePat } from './pat.js';
import { constantTimeEqual, createLogTagger } from './secrets.js';
import { SigningKeyRing } from './signing-keys.js';
import { handleTokenRequest, type TokenEndpointDeps, type TokenEndpointKind, type TokenForm, type TokenResponse } from './token-endpoint.js';
import { TokenIssuer } from './token-issuer.js';

export interface Identity {
  userId: number;
  clientId: number;
  clientName: string;
  username: string;
  isAdmin: boolean;
  /** False for a deactivated user: the token still authenticates, the API answers 403. */
  userActive: boolean;
  clientActive: boolean;
}

export type BearerFailure = 'missing' | 'malformed' | 'invalid' | 'expired' | 'revoked';
export type BearerResult =
  | { ok: true; identity: Identity; via: 'pat' | 'jwt' | 'legacy-jwt' }
  | { ok: false; reason: BearerFailure };

export type Audience = 'current' | 'legacy';

export interface AuthServiceOptions {
  now?: () => number;
  logger?: Logger;
  /** scrypt cost for new password hashes; lower it only in tests. */
  scryptCost?: ScryptCost;
  /** Password verification; tests wrap the real one to count the requests that reach the hash. */
  verifyPassword?: (password: string, encodedHash: string) => Promise<boolean>;
}

/** PAT last-use time is written at most this often, so a busy token does not write on every request. */
export const PAT_LAST_USED_INTERVAL_MS = 60_000;
/** Expired refresh sessions are deleted at start and then at most this often, from the token endpoint. */
export const REFRESH_PURGE_INTERVAL_MS = 3_600_000;

export class AuthService {
  readonly accounts: Accounts;
  private lastPurgeMs: number;

  private constructor(
    private readonly store: Async<AuthStore>,
    private readonly config: AuthConfig,
    private readonly issuer: TokenIssuer,
    private readonly endpoint: TokenEndpointDeps,
    private readonly now: () => number,
    private readonly logger: Logger,
    secretBox: SecretBox,
    scryptCost: ScryptCost,
  ) {
    this.accounts = new Accounts(store, secretBox, config.patPrefix, now, scryptCost);
    this.lastPurgeMs = now();
  }

  /**
   * Loads (or on first start creates) the JWT signing key and deletes expired refresh sessions;
   * migrations must have been applied. `authStore` is the auth store's port (StorePorts.auth).
   */
  static async create(authStore: Async<AuthStore>, config: AuthConfig, secretBox: SecretBox, options: AuthServiceOptions = {}): Promise<AuthService> {
    const now = options.now ?? Date.now;
    const logger = (options.logger ?? silentLogger()).child({ module: 'auth' });
    const keys = await SigningKeyRing.open(authStore, secretBox, now());
    const issuer = new TokenIssuer(authStore, keys, config.issuer);
    const scryptCost = options.scryptCost ?? DEFAULT_SCRYPT_COST;
    let decoyHash: Promise<string> | undefined;
    const endpoint: TokenEndpointDeps = {
      store: authStore,
      issuer,
      clients: {
        current: { clientId: config.clientId, accessTokenSeconds: config.accessTokenSeconds, refreshTokenSeconds: config.refreshTokenSeconds, scope: 'campaigns' },
        legacy: { clientId: config.legacy.clientId, accessTokenSeconds: config.legacy.accessTokenSeconds, refreshTokenSeconds: config.legacy.refreshTokenSeconds, scope: 'senders' },
      },
      usernameLimiter: new FailureLimiter({ windowMs: config.bruteForce.windowMs, maxFailures: config.bruteForce.maxFailuresPerUsername }),
      addressLimiter: new FailureLimiter({ windowMs: config.bruteForce.windowMs, maxFailures: config.bruteForce.maxFailuresPerAddress }),
      verifyPassword: options.verifyPassword ?? verifyPassword,
      logTag: createLogTagger(),
      decoyPasswordHash: () => (decoyHash ??= hashPassword('decoy password for unknown usernames', scryptCost)),
      now,
      logger,
    };
    const service = new AuthService(authStore, config, issuer, endpoint, now, logger, secretBox, scryptCost);
    await service.purgeExpiredSessions(service.lastPurgeMs);
    return service;
  }

  /** Reads the Authorization header and resolves it to an identity, or says why not (all 401). */
  async authenticate(authorizationHeader: string | undefined, audience: Audience): Promise<BearerResult> {
    const bearer = readBearerToken(authorizationHeader);
    if (!bearer.ok) return bearer;
    const token = bearer.token;
    if (looksLikePat(this.config.patPrefix, token)) return this.authenticatePat(token);
    if (!looksLikeJwt(token)) return { ok: false, reason: 'malformed' };
    const audiences = audience === 'current' ? [this.config.clientId] : [this.config.legacy.clientId, this.config.clientId];
    const check = await this.issuer.checkAccessToken(token, audiences, this.now());
    if (!check.ok) return check;
    const identity = await this.identityOf(check.userId);
    if (identity === undefined) return { ok: false, reason: 'invalid' };
    return { ok: true, identity, via: check.clientId === this.config.clientId ? 'jwt' : 'legacy-jwt' };
  }

  /** SPEC "Authentication" §4: an active administrator of an active client, else 403. */
  isRecognizedAdministrator(identity: Identity): boolean {
    return identity.isAdmin && identity.userActive && identity.clientActive;
  }

  /** POST /auth/token ('current') and POST /legacy/auth/token ('legacy'). */
  async tokenEndpoint(form: TokenForm, remoteAddress: string, which: TokenEndpointKind): Promise<TokenResponse> {
    const nowMs = this.now();
    if (nowMs - this.lastPurgeMs >= REFRESH_PURGE_INTERVAL_MS) {
      this.lastPurgeMs = nowMs;
      await this.purgeExpiredSessions(nowMs);
    }
    return handleTokenRequest(this.endpoint, which, form, remoteAddress);
  }

  createClient(input: { name: string; webhookUrl?: string; webhookSecret?: string }) {
    return this.accounts.createClient(input);
  }

  setWebhook(clientName: string, input: { url: string | null; secret?: string | null }) {
    return this.accounts.setWebhook(clientName, input);
  }

  createUser(input: { clientName: string; username: string; password: string; isAdmin?: boolean }) {
    return this.accounts.createUser({ ...input, isAdmin: input.isAdmin ?? false });
  }

  /** Returns the new token; it is shown once and only its hash is kept. */
  async createPersonalAccessToken(username: string, options: { expiresAt?: number | null } = {}): Promise<string> {
    return (await this.accounts.issuePersonalAccessToken(username, options)).token;
  }

  revokePat(token: string): Promise<boolean> {
    return this.accounts.revokePersonalAccessToken(token);
  }

  addSender(input: { clientName: string; sender: string; type: number }) {
    return this.accounts.addSender(input);
  }

  senderList(identity: Identity): Promise<{ name: string; type: number }[]> {
    return this.accounts.senders(identity.clientId);
  }

  private async authenticatePat(token: string): Promise<BearerResult> {
    if (!isWellFormedPat(this.config.patPrefix, token)) return { ok: false, reason: 'malformed' };
    const tokenHash = hashPat(token);
    const row = await this.store.patByHash(tokenHash);
    // The lookup is by a digest of a 256-bit random value; the stored digest is still compared in constant time.
    if (row === undefined || !constantTimeEqual(row.token_hash, tokenHash)) return { ok: false, reason: 'invalid' };
    const nowMs = this.now();
    if (row.revoked_at !== null) return { ok: false, reason: 'revoked' };
    if (row.expires_at !== null && row.expires_at <= nowMs) return { ok: false, reason: 'expired' };
    const identity = await this.identityOf(row.user_id);
    if (identity === undefined) return { ok: false, reason: 'invalid' };
    await this.recordPatUse(row.id, nowMs);
    return { ok: true, identity, via: 'pat' };
  }

  /** Housekeeping: a store that refuses the DELETE (full, read-only) must not fail a token request. */
  private async purgeExpiredSessions(nowMs: number): Promise<void> {
    try {
      await this.store.deleteExpiredRefreshSessions(nowMs);
    } catch (err) {
      this.logger.warn({ err }, 'could not delete expired refresh sessions');
    }
  }

  /**
   * last_used_at is bookkeeping: a read-only, full or busy database must not turn a valid token into
   * a failed request, so a failed write is logged (never the token) and authentication goes on.
   */
  private async recordPatUse(patId: number, nowMs: number): Promise<void> {
    try {
      await this.store.touchPat(patId, nowMs, PAT_LAST_USED_INTERVAL_MS);
    } catch (err) {
      this.logger.warn({ err, patId }, 'could not record the last use of a personal access token');
    }
  }

  private async identityOf(userId: number): Promise<Identity | undefined> {
    const user = await this.store.userById(userId);
    if (user === undefined) return undefined;
    return {
      userId: user.userId, clientId: user.clientId, clientName: user.clientName, username: user.username,
      isAdmin: user.isAdmin, userActive: user.userActive, clientActive: user.clientActive,
    };
  }
}
