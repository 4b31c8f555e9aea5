/**
 * The token endpoints over real HTTP on 127.0.0.1 (Koa + authRouter), with a real SQLite file.
 * SPEC "POST {auth_url}/token", "Legacy v2: POST {legacy_auth_url}/token", "Authentication".
 */
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import Koa from 'koa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { authRouter } from '../../src/auth/index.js';
import { createAuthFixture, seedAccounts, START_MS, type AuthFixture } from './auth-fixture.js';
import { expectMatchesOpenApi } from '../support/openapi-check.js';

let f: AuthFixture;
let server: Server;
let baseUrl: string;

beforeEach(async () => {
  f = await createAuthFixture({ bruteForce: { maxFailuresPerUsername: 3, maxFailuresPerAddress: 6, windowMs: 60_000 } });
  await seedAccounts(f.auth);
  const app = new Koa();
  // A client leaving mid-body is a socket error the test causes on purpose; keep Koa from printing it.
  app.silent = true;
  app.use(authRouter(f.auth).routes());
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await f.close();
});

interface Reply { status: number; body: Record<string, unknown>; headers: Headers }

async function post(path: string, fields: Record<string, string> | string, contentType = 'application/x-www-form-urlencoded'): Promise<Reply> {
  const body = typeof fields === 'string' ? fields : new URLSearchParams(fields).toString();
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'Content-Type': contentType }, body });
  const json = (await response.json()) as Record<string, unknown>;
  expectMatchesOpenApi('POST', path, { status: response.status, headers: response.headers, body: json });
  return { status: response.status, body: json, headers: response.headers };
}

const login = { client_id: 'messaging-api', grant_type: 'password', username: 'alice', password: 'correct horse' };
const legacyLogin = { client_id: 'legacy-api', grant_type: 'password', username: 'alice', password: 'correct horse' };

describe('POST /auth/token, password grant', () => {
  it('answers 200 with the spec fields, lifetimes from config, no-store', async () => {
    const reply = await post('/auth/token', login);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(reply.body).toEqual({
      access_token: expect.any(String), expires_in: 300, refresh_expires_in: 1800, refresh_token: expect.any(String),
      token_type: 'Bearer', 'not-before-policy': 0, session_state: expect.any(String), scope: 'campaigns',
    });
  });

  it('issues an ES256 JWT for the user, audience messaging-api, accepted by the v1 API', async () => {
    const { body } = await post('/auth/token', login);
    const accessToken = String(body['access_token']);
    expect(decodeProtectedHeader(accessToken)).toMatchObject({ alg: 'ES256', typ: 'JWT', kid: expect.any(String) });
    const claims = decodeJwt(accessToken);
    expect(claims).toMatchObject({ iss: 'smsgate', aud: 'messaging-api', azp: 'messaging-api', preferred_username: 'alice', sid: body['session_state'] });
    expect((claims.exp as number) - (claims.iat as number)).toBe(300);
    const result = await f.auth.authenticate(`Bearer ${accessToken}`, 'current');
    expect(result).toMatchObject({ ok: true, via: 'jwt', identity: { username: 'alice', clientName: 'acme', isAdmin: true } });
  });

  it('the access token expires after expires_in seconds', async () => {
    const { body } = await post('/auth/token', login);
    const header = `Bearer ${String(body['access_token'])}`;
    f.clock.nowMs = START_MS + 299_000;
    expect(await f.auth.authenticate(header, 'current')).toMatchObject({ ok: true });
    f.clock.nowMs = START_MS + 300_000;
    expect(await f.auth.authenticate(header, 'current')).toEqual({ ok: false, reason: 'expired' });
  });

  it('a token with a changed signature or payload is invalid', async () => {
    const { body } = await post('/auth/token', login);
    const [head, payload, signature] = String(body['access_token']).split('.') as [string, string, string];
    const flipped = signature.startsWith('A') ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
    expect(await f.auth.authenticate(`Bearer ${head}.${payload}.${flipped}`, 'current')).toEqual({ ok: false, reason: 'invalid' });
    const forged = Buffer.from(JSON.stringify({ ...decodeJwt(String(body['access_token'])), sub: '2' })).toString('base64url');
    expect(await f.auth.authenticate(`Bearer ${head}.${forged}.${signature}`, 'current')).toEqual({ ok: false, reason: 'invalid' });
  });

  it.each([
    ['a wrong password', { ...login, password: 'wrong' }],
    ['an unknown user', { ...login, username: 'mallory' }],
    ['a password of another user', { ...login, password: 'battery staple' }],
  ])('%s is 400 invalid_grant', async (_name, form) => {
    const reply = await post('/auth/token', form);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid user credentials' });
    expect(reply.headers.get('cache-control')).toBe('no-store');
  });

  it('a deactivated user gets no token', async () => {
    await f.auth.accounts.setUserActive('alice', false);
    expect((await post('/auth/token', login)).body).toMatchObject({ error: 'invalid_grant' });
  });

  it('a non-administrator gets a token (the API answers 403 later)', async () => {
    const reply = await post('/auth/token', { ...login, username: 'bob', password: 'battery staple' });
    expect(reply.status).toBe(200);
    const result = await f.auth.authenticate(`Bearer ${String(reply.body['access_token'])}`, 'current');
    expect(result.ok && f.auth.isRecognizedAdministrator(result.identity)).toBe(false);
  });
});

describe('POST /auth/token, request errors', () => {
  it.each([
    ['an unknown client_id', { ...login, client_id: 'someone-else' }, 401, 'invalid_client'],
    ['the legacy client_id at the current endpoint', { ...login, client_id: 'legacy-api' }, 401, 'invalid_client'],
    ['no client_id', { grant_type: 'password', username: 'alice', password: 'x' }, 400, 'invalid_request'],
    ['no grant_type', { client_id: 'messaging-api', username: 'alice', password: 'x' }, 400, 'invalid_request'],
    ['an unsupported grant_type', { ...login, grant_type: 'client_credentials' }, 400, 'unsupported_grant_type'],
    ['no username', { client_id: 'messaging-api', grant_type: 'password', password: 'x' }, 400, 'invalid_request'],
    ['no password', { client_id: 'messaging-api', grant_type: 'password', username: 'alice' }, 400, 'invalid_request'],
    ['an empty password', { ...login, password: '' }, 400, 'invalid_request'],
    ['no refresh_token', { client_id: 'messaging-api', grant_type: 'refresh_token' }, 400, 'invalid_request'],
    ['an unknown refresh_token', { client_id: 'messaging-api', grant_type: 'refresh_token', refresh_token: 'nope' }, 400, 'invalid_grant'],
  ])('%s -> %i %s', async (_name, form, status, error) => {
    const reply = await post('/auth/token', form);
    expect(reply.status).toBe(status);
    expect(reply.body).toEqual({ error, error_description: expect.any(String) });
  });

  it('a parameter given twice is invalid_request (RFC 6749 §3.2)', async () => {
    const reply = await post('/auth/token', `${new URLSearchParams(login).toString()}&password=other`);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: 'invalid_request', error_description: 'Duplicate parameter: password' });
  });

  it('a JSON body is refused: the endpoint takes form encoding only', async () => {
    const reply = await post('/auth/token', JSON.stringify(login), 'application/json');
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: 'invalid_request' });
  });

  it('a body past 16 KiB is 413', async () => {
    const reply = await post('/auth/token', { ...login, padding: 'x'.repeat(17 * 1024) });
    expect(reply.status).toBe(413);
    expect(reply.body).toMatchObject({ error: 'invalid_request' });
  });

  it('reads a form body that arrives one byte at a time the same as whole', async () => {
    const body = Buffer.from(new URLSearchParams(login).toString());
    const reply = await new Promise<{ status: number; json: Record<string, unknown> }>((resolve, reject) => {
      const req = request(`${baseUrl}/auth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': body.length } }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
      });
      req.on('error', reject);
      const writeFrom = (index: number): void => {
        if (index === body.length) {
          req.end();
          return;
        }
        req.write(body.subarray(index, index + 1), () => setImmediate(() => writeFrom(index + 1)));
      };
      req.flushHeaders();
      writeFrom(0);
    });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ token_type: 'Bearer', expires_in: 300 });
  });

  it('a client that goes away mid-body leaves the server serving', async () => {
    await new Promise<void>((resolve) => {
      const req = request(`${baseUrl}/auth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': 1000 } });
      req.on('error', () => resolve());
      req.write('client_id=messaging-api&', () => setTimeout(() => {
        req.destroy();
        resolve();
      }, 20));
    });
    expect((await post('/auth/token', login)).status).toBe(200);
  });

  it('a GET is not served', async () => {
    // This app mounts the auth router alone (no error boundary), so its 404 is not the API's problem+json.
    const response = await fetch(`${baseUrl}/auth/token`);
    expect(response.status).not.toBe(200);
    expect(response.status).toBeLessThan(500);
  });
});

describe('refresh_token grant', () => {
  it('rotates: the new pair works, lifetimes restart, the session id stays', async () => {
    const first = (await post('/auth/token', login)).body;
    f.clock.nowMs = START_MS + 1_000_000;
    const second = await post('/auth/token', { client_id: 'messaging-api', grant_type: 'refresh_token', refresh_token: String(first['refresh_token']) });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ expires_in: 300, refresh_expires_in: 1800, token_type: 'Bearer', session_state: first['session_state'] });
    expect(second.body['refresh_token']).not.toBe(first['refresh_token']);
    expect(await f.auth.authenticate(`Bearer ${String(second.body['access_token'])}`, 'current')).toMatchObject({ ok: true });
  });

  it('a reused refresh token is invalid_grant and ends the whole session', async () => {
    const first = (await post('/auth/token', login)).body;
    const refresh = { client_id: 'messaging-api', grant_type: 'refresh_token', refresh_token: String(first['refresh_token']) };
    const second = (await post('/auth/token', refresh)).body;
    const reuse = await post('/auth/token', refresh);
    expect(reuse.status).toBe(400);
    expect(reuse.body).toMatchObject({ error: 'invalid_grant' });
    // The legitimate successor is revoked too, and so are the session's access tokens.
    const successor = await post('/auth/token', { ...refresh, refresh_token: String(second['refresh_token']) });
    expect(successor.body).toMatchObject({ error: 'invalid_grant' });
    expect(await f.auth.authenticate(`Bearer ${String(second['access_token'])}`, 'current')).toEqual({ ok: false, reason: 'revoked' });
    expect(await f.auth.authenticate(`Bearer ${String(first['access_token'])}`, 'current')).toEqual({ ok: false, reason: 'revoked' });
  });

  it('an expired refresh token is invalid_grant', async () => {
    const first = (await post('/auth/token', login)).body;
    f.clock.nowMs = START_MS + 1_800_000;
    const reply = await post('/auth/token', { client_id: 'messaging-api', grant_type: 'refresh_token', refresh_token: String(first['refresh_token']) });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: 'invalid_grant', error_description: 'Token is not active' });
  });

  it('a refresh token of the legacy client does not work at the current endpoint', async () => {
    const legacy = (await post('/legacy/auth/token', legacyLogin)).body;
    const reply = await post('/auth/token', { client_id: 'messaging-api', grant_type: 'refresh_token', refresh_token: String(legacy['refresh_token']) });
    expect(reply.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('a refresh token of a user deactivated since is invalid_grant', async () => {
    const first = (await post('/auth/token', login)).body;
    await f.auth.accounts.setUserActive('alice', false);
    const reply = await post('/auth/token', { client_id: 'messaging-api', grant_type: 'refresh_token', refresh_token: String(first['refresh_token']) });
    expect(reply.body).toMatchObject({ error: 'invalid_grant' });
  });
});

describe('POST /legacy/auth/token', () => {
  it('answers exactly the legacy fields with 120 s access and 1,200 s refresh', async () => {
    const reply = await post('/legacy/auth/token', legacyLogin);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(reply.body).toEqual({
      access_token: expect.any(String), expires_in: 120, refresh_expires_in: 1200, refresh_token: expect.any(String),
      token_type: 'Bearer', scope: 'senders',
    });
    const claims = decodeJwt(String(reply.body['access_token']));
    expect((claims.exp as number) - (claims.iat as number)).toBe(120);
  });

  it('legacy JWTs work on the legacy API only', async () => {
    const token = `Bearer ${String((await post('/legacy/auth/token', legacyLogin)).body['access_token'])}`;
    expect(await f.auth.authenticate(token, 'legacy')).toMatchObject({ ok: true, via: 'legacy-jwt' });
    expect(await f.auth.authenticate(token, 'current')).toEqual({ ok: false, reason: 'invalid' });
  });

  it('current JWTs are accepted on the legacy API', async () => {
    const token = `Bearer ${String((await post('/auth/token', login)).body['access_token'])}`;
    expect(await f.auth.authenticate(token, 'legacy')).toMatchObject({ ok: true, via: 'jwt' });
  });

  it('the legacy access token expires after 120 s', async () => {
    const token = `Bearer ${String((await post('/legacy/auth/token', legacyLogin)).body['access_token'])}`;
    f.clock.nowMs = START_MS + 120_000;
    expect(await f.auth.authenticate(token, 'legacy')).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses the current client id and bad credentials', async () => {
    expect((await post('/legacy/auth/token', { ...legacyLogin, client_id: 'messaging-api' })).status).toBe(401);
    const bad = await post('/legacy/auth/token', { ...legacyLogin, password: 'nope' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('honours configured legacy lifetimes', async () => {
    await f.close();
    f = await createAuthFixture({ legacy: { clientId: 'old-app', accessTokenSeconds: 60, refreshTokenSeconds: 600 } });
    await seedAccounts(f.auth);
    const reply = await f.auth.tokenEndpoint({ ...legacyLogin, client_id: 'old-app' }, '127.0.0.1', 'legacy');
    expect(reply.body).toMatchObject({ expires_in: 60, refresh_expires_in: 600 });
  });
});

describe('brute force on the token endpoint', () => {
  it('after 3 failures for a username: 429 with Retry-After, even with the right password, until the window passes', async () => {
    for (let i = 0; i < 3; i++) expect((await post('/auth/token', { ...login, password: `guess${i}` })).status).toBe(400);
    const refused = await post('/auth/token', login);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.body).toMatchObject({ error: 'invalid_grant' });
    // Another user from the same address is not locked by alice's counter.
    expect((await post('/auth/token', { ...login, username: 'bob', password: 'battery staple' })).status).toBe(200);
    f.clock.nowMs = START_MS + 60_001;
    expect((await post('/auth/token', login)).status).toBe(200);
  });

  it('after 6 failures from one address every username is refused from it', async () => {
    for (let i = 0; i < 6; i++) await post('/auth/token', { ...login, username: `user${i}`, password: 'x' });
    const refused = await post('/auth/token', { ...login, username: 'bob', password: 'battery staple' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A different address is unaffected.
    expect((await f.auth.tokenEndpoint({ ...login, username: 'bob', password: 'battery staple' }, '192.0.2.7', 'current')).status).toBe(200);
  });

  it('invalid refresh tokens count against the address', async () => {
    for (let i = 0; i < 6; i++) await post('/auth/token', { client_id: 'messaging-api', grant_type: 'refresh_token', refresh_token: `guess${i}` });
    expect((await post('/auth/token', { client_id: 'messaging-api', grant_type: 'refresh_token', refresh_token: 'again' })).status).toBe(429);
  });

  it('a successful login clears the username counter', async () => {
    for (let i = 0; i < 2; i++) await post('/auth/token', { ...login, password: 'nope' });
    expect((await post('/auth/token', login)).status).toBe(200);
    for (let i = 0; i < 2; i++) await post('/auth/token', { ...login, password: 'nope' });
    expect((await post('/auth/token', login)).status).toBe(200);
  });
});
