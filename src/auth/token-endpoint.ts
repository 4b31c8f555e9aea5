/**
 * The OAuth 2.0 token endpoints (RFC 6749 §4.3 password grant, §6 refresh grant) as a pure
 * request -> response function over already parsed form fields, so the HTTP layer stays thin.
 *
 * Errors (RFC 6749 §5.2, SPEC "POST {auth_url}/token"):
 *   invalid_client 401          client_id not the endpoint's client id
 *   invalid_request 400         a required field (client_id included) missing, or a field given twice
 *   unsupported_grant_type 400  grant_type other than password / refresh_token
 *   invalid_grant 400           bad username or password, unknown/expired/reused/revoked refresh token
 *   invalid_grant 429           too many failed attempts (Retry-After says when to try again)
 *   temporarily_unavailable 503 the store refused a write (full, read-only, busy); Retry-After (RFC 6749 §4.1.2.1 names the code)
 * Every response carries Cache-Control: no-store (RFC 6749 §5.1).
 */
import type { Logger } from '../common/log.js';
import type { AuthStore } from '../store/sqlite/auth-store.js';
import type { Async } from '../store/ports.js';
import { isTransientStoreFailure } from '../store/write-failures.js';
import type { CountedAttempt, FailureLimiter } from './failure-limiter.js';
import type { IssuedTokens, TokenClientProfile, TokenIssuer } from './token-issuer.js';

export type TokenEndpointKind = 'current' | 'legacy';

/** One form field: absent, given once, or given more than once (RFC 6749 §3.2 forbids repeats). */
export type FormValue = string | readonly string[] | undefined;
export type TokenForm = Readonly<Record<string, FormValue>>;

export interface TokenResponse {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

export interface TokenEndpointDeps {
  store: Async<AuthStore>;
  issuer: TokenIssuer;
  clients: Record<TokenEndpointKind, TokenClientProfile>;
  usernameLimiter: FailureLimiter;
  addressLimiter: FailureLimiter;
  /** scrypt verification (password.ts); a dependency so a test can count how many requests reach it. */
  verifyPassword: (password: string, encodedHash: string) => Promise<boolean>;
  /** Short keyed digest used in logs instead of a username (secrets.ts createLogTagger). */
  logTag: (value: string) => string;
  /** A hash checked when the username is unknown, so a miss costs as much time as a wrong password. */
  decoyPasswordHash: () => Promise<string>;
  now: () => number;
  logger: Logger;
}

/** Retry-After (RFC 9110 §10.2.3) of a 503 when the store refuses a write. */
export const STORE_RETRY_AFTER_SECONDS = 1;

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;
const GRANTS: Record<TokenEndpointKind, readonly string[]> = {
  current: ['password', 'refresh_token'],
  // SPEC "Legacy v2 ... /token" names the password grant; the legacy response hands out a refresh
  // token, so its refresh grant is served too (with the legacy lifetimes).
  legacy: ['password', 'refresh_token'],
};

function oauthError(status: number, error: string, description: string, headers: Record<string, string> = {}): TokenResponse {
  return { status, body: { error, error_description: description }, headers: { ...NO_STORE, ...headers } };
}

type Field = { ok: true; value: string | undefined } | { ok: false; response: TokenResponse };

function field(form: TokenForm, name: string): Field {
  const raw = form[name];
  if (raw === undefined || typeof raw === 'string') return { ok: true, value: raw === '' ? undefined : raw };
  if (raw.length === 1) return { ok: true, value: raw[0] === '' ? undefined : raw[0] };
  return { ok: false, response: oauthError(400, 'invalid_request', `Duplicate parameter: ${name}`) };
}

export async function handleTokenRequest(deps: TokenEndpointDeps, kind: TokenEndpointKind, form: TokenForm, remoteAddress: string): Promise<TokenResponse> {
  const client = deps.clients[kind];
  const clientId = field(form, 'client_id');
  if (!clientId.ok) return clientId.response;
  // A missing field is a malformed request (400), not failed client authentication (401).
  if (clientId.value === undefined) return oauthError(400, 'invalid_request', 'Missing parameter: client_id');
  if (clientId.value !== client.clientId) return oauthError(401, 'invalid_client', 'Invalid client or Invalid client credentials');

  const grantType = field(form, 'grant_type');
  if (!grantType.ok) return grantType.response;
  if (grantType.value === undefined) return oauthError(400, 'invalid_request', 'Missing form parameter: grant_type');
  if (!GRANTS[kind].includes(grantType.value)) return oauthError(400, 'unsupported_grant_type', `Unsupported grant_type: ${grantType.value}`);

  // A store that cannot serve (full, read-only, busy, unreachable) throws from here: the HTTP layer
  // (koa.ts) answers 503 temporarily_unavailable with Retry-After and logs it as one outage.
  const issued = grantType.value === 'password'
    ? await passwordGrant(deps, client, form, remoteAddress)
    : await refreshGrant(deps, client, form, remoteAddress);
  if ('status' in issued) return issued;
  return { status: 200, body: responseBody(kind, issued), headers: { ...NO_STORE } };
}

function responseBody(kind: TokenEndpointKind, tokens: IssuedTokens): Record<string, unknown> {
  const common = {
    access_token: tokens.accessToken,
    expires_in: tokens.expiresInSeconds,
    refresh_expires_in: tokens.refreshExpiresInSeconds,
    refresh_token: tokens.refreshToken,
    token_type: 'Bearer',
  };
  // SPEC "Legacy v2": exactly access_token, expires_in, refresh_expires_in, refresh_token, token_type, scope.
  if (kind === 'legacy') return { ...common, scope: tokens.scope };
  return { ...common, 'not-before-policy': 0, session_state: tokens.sessionState, scope: tokens.scope };
}

/** The attempts a request holds against the limiters, to be given back when it succeeds. */
interface Admission {
  attempts: Array<{ limiter: FailureLimiter; attempt: CountedAttempt }>;
}

/**
 * Counts this attempt against the address and (for the password grant) the username before any
 * hash work: both keys are checked and counted in one synchronous step, so concurrent requests
 * cannot all pass a check made before the first of them fails. A limited request
 * holds no attempt.
 */
function admit(deps: TokenEndpointDeps, keys: { username?: string; address: string }): Admission | TokenResponse {
  const nowMs = deps.now();
  const wanted: Array<[FailureLimiter, string]> = [[deps.addressLimiter, keys.address]];
  if (keys.username !== undefined) wanted.push([deps.usernameLimiter, keys.username]);
  let retryAfterMs = 0;
  for (const [limiter, key] of wanted) {
    const check = limiter.check(key, nowMs);
    if (check.limited) retryAfterMs = Math.max(retryAfterMs, check.retryAfterMs);
  }
  if (retryAfterMs === 0) {
    const attempts = wanted.map(([limiter, key]) => {
      const admission = limiter.tryAcquire(key, nowMs);
      // check() just said there is room and nothing ran in between.
      if (admission.limited) throw new Error('limiter changed between check and acquire');
      return { limiter, attempt: admission.attempt };
    });
    return { attempts };
  }
  const retryAfterSeconds = Math.ceil(retryAfterMs / 1000);
  deps.logger.warn({ address: keys.address, usernameTag: tagOf(deps, keys.username), retryAfterSeconds }, 'token request refused: too many failed attempts');
  return oauthError(429, 'invalid_grant', `Too many failed attempts; retry after ${retryAfterSeconds} seconds`, { 'Retry-After': String(retryAfterSeconds) });
}

/** A success gives its attempts back; a failure leaves them counted. Once: a second call gives nothing. */
function giveBack(admission: Admission): void {
  for (const { limiter, attempt } of admission.attempts.splice(0)) limiter.release(attempt);
}

/**
 * Runs an admitted grant; a store that cannot serve (full, busy, unreachable) is no failed attempt
 * of the client's, so its attempts are given back before the error goes on to become a 503:
 * otherwise a database outage would lock every user out for the limiter's window after it.
 */
async function admitted<T>(admission: Admission, grant: () => Promise<T>): Promise<T> {
  try {
    return await grant();
  } catch (err) {
    if (isTransientStoreFailure(err)) giveBack(admission);
    throw err;
  }
}

/** Never the raw username in a log line: a password typed into the username field would land there. */
function tagOf(deps: TokenEndpointDeps, username: string | undefined): string | undefined {
  return username === undefined ? undefined : deps.logTag(username);
}

async function passwordGrant(deps: TokenEndpointDeps, client: TokenClientProfile, form: TokenForm, address: string): Promise<IssuedTokens | TokenResponse> {
  const username = field(form, 'username');
  if (!username.ok) return username.response;
  const password = field(form, 'password');
  if (!password.ok) return password.response;
  if (username.value === undefined) return oauthError(400, 'invalid_request', 'Missing parameter: username');
  if (password.value === undefined) return oauthError(400, 'invalid_request', 'Missing parameter: password');

  const admission = admit(deps, { username: username.value, address });
  if ('status' in admission) return admission;
  const [name, secret] = [username.value, password.value];
  return admitted(admission, () => checkPassword(deps, client, admission, name, secret, address));
}

async function checkPassword(deps: TokenEndpointDeps, client: TokenClientProfile, admission: Admission, username: string, password: string, address: string): Promise<IssuedTokens | TokenResponse> {
  const user = await deps.store.userByUsername(username);
  const passwordOk = await deps.verifyPassword(password, user?.passwordHash ?? (await deps.decoyPasswordHash()));
  // A user of a deactivated client cannot log in either; the answer does not say
  // which check failed, so it reveals nothing about the account.
  if (user === undefined || !passwordOk || !user.userActive || !user.clientActive) {
    deps.logger.info({ address, usernameTag: tagOf(deps, username), clientId: client.clientId }, 'password grant refused');
    return oauthError(400, 'invalid_grant', 'Invalid user credentials');
  }
  giveBack(admission);
  deps.usernameLimiter.reset(username);
  return deps.issuer.issueForLogin(user.userId, user.username, client, deps.now());
}

async function refreshGrant(deps: TokenEndpointDeps, client: TokenClientProfile, form: TokenForm, address: string): Promise<IssuedTokens | TokenResponse> {
  const refreshToken = field(form, 'refresh_token');
  if (!refreshToken.ok) return refreshToken.response;
  if (refreshToken.value === undefined) return oauthError(400, 'invalid_request', 'Missing parameter: refresh_token');

  const admission = admit(deps, { address });
  if ('status' in admission) return admission;
  const presented = refreshToken.value;
  return admitted(admission, () => checkRefresh(deps, client, admission, presented, address));
}

async function checkRefresh(deps: TokenEndpointDeps, client: TokenClientProfile, admission: Admission, refreshToken: string, address: string): Promise<IssuedTokens | TokenResponse> {
  const nowMs = deps.now();
  const check = await deps.issuer.checkRefreshToken(refreshToken, client.clientId, nowMs);
  if (!check.ok) {
    deps.logger.info({ address, reason: check.reason, clientId: client.clientId }, 'refresh grant refused');
    return oauthError(400, 'invalid_grant', check.reason === 'expired' ? 'Token is not active' : 'Invalid refresh token');
  }
  const user = await deps.store.userById(check.session.user_id);
  if (user === undefined || !user.userActive || !user.clientActive) {
    await deps.issuer.revokeFamily(check.session.family_id, nowMs);
    return oauthError(400, 'invalid_grant', 'Invalid refresh token');
  }
  giveBack(admission);
  const issued = await deps.issuer.issueForRefresh(check.session, user.username, client, nowMs);
  // Lost a race with a concurrent refresh of the same token: it counts as reuse next time it is seen.
  if (issued === undefined) return oauthError(400, 'invalid_grant', 'Invalid refresh token');
  return issued;
}
