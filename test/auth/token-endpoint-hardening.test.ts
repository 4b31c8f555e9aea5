/**
 * Over real HTTP and a real SQLite file: the login limiter holds under concurrency
 * (an attempt is counted before the hash work), a deactivated client's users cannot log in, a failed
 * login does not log the username, and a store that refuses a write gives 503 with Retry-After.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import Koa from 'koa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthService, authRouter, DEFAULT_SCRYPT_COST, verifyPassword } from '../../src/auth/index.js';
import { createLogger } from '../../src/common/log.js';
import { expectMatchesOpenApi } from '../support/openapi-check.js';
import { createAuthFixture, seedAccounts, TEST_SCRYPT_COST, type AuthFixture } from './auth-fixture.js';

const LIMIT = 10;
let f: AuthFixture;
let auth: AuthService;
let server: Server;
let baseUrl: string;
let hashCalls: number;
let logged: string;

beforeEach(async () => {
  f = await createAuthFixture({ bruteForce: { maxFailuresPerUsername: LIMIT, maxFailuresPerAddress: 1000, windowMs: 60_000 } });
  await seedAccounts(f.auth);
  hashCalls = 0;
  logged = '';
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => {
    logged += chunk.toString('utf8');
  });
  auth = await AuthService.create(f.authStore, f.config, f.secretBox, {
    now: () => f.clock.nowMs,
    scryptCost: TEST_SCRYPT_COST,
    logger: createLogger({ level: 'trace', destination: stream }),
    verifyPassword: (password, encoded) => {
      hashCalls++;
      return verifyPassword(password, encoded);
    },
  });
  const app = new Koa();
  app.silent = true;
  app.use(authRouter(auth).routes());
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await f.close();
});

interface Reply { status: number; body: Record<string, unknown>; headers: Headers }

async function post(path: string, fields: Record<string, string>): Promise<Reply> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(),
  });
  const body = (await response.json()) as Record<string, unknown>;
  expectMatchesOpenApi('POST', path, { status: response.status, headers: response.headers, body });
  return { status: response.status, body, headers: response.headers };
}

const login = { client_id: 'messaging-api', grant_type: 'password', username: 'alice', password: 'correct horse' };

describe('the login limiter under concurrency', () => {
  it('60 concurrent wrong guesses over HTTP: at most 10 reach the hash, the rest get 429, then the right password gets 429', async () => {
    // carol's hash has the production scrypt cost, so guesses really overlap while hashing.
    const production = await AuthService.create(f.authStore, f.config, f.secretBox, { now: () => f.clock.nowMs, scryptCost: DEFAULT_SCRYPT_COST });
    await production.createUser({ clientName: 'acme', username: 'carol', password: 'carol secret', isAdmin: true });
    const carol = { ...login, username: 'carol', password: 'carol secret' };
    const guesses = await Promise.all(Array.from({ length: 60 }, (_, i) => post('/auth/token', { ...carol, password: `guess-${i}` })));
    const statuses = guesses.map((g) => g.status);
    expect(hashCalls).toBeLessThanOrEqual(LIMIT);
    expect(statuses.filter((s) => s === 400).length).toBeLessThanOrEqual(LIMIT);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(60 - LIMIT);
    expect(statuses.every((s) => s === 400 || s === 429)).toBe(true);
    const right = await post('/auth/token', carol);
    expect(right.status).toBe(429);
    expect(right.headers.get('retry-after')).toBe('60');
    expect(right.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('the right password sent while 60 guesses are still hashing gets the limiter answer, never 200', async () => {
    const inFlight = Array.from({ length: 60 }, (_, i) => auth.tokenEndpoint({ ...login, password: `guess-${i}` }, '198.51.100.1', 'current'));
    const right = await auth.tokenEndpoint(login, '198.51.100.1', 'current');
    const guesses = await Promise.all(inFlight);
    expect(right.status).toBe(429);
    expect(right.headers['Retry-After']).toBe('60');
    expect(hashCalls).toBe(LIMIT);
    expect(guesses.filter((g) => g.status === 400)).toHaveLength(LIMIT);
    expect(guesses.filter((g) => g.status === 429)).toHaveLength(60 - LIMIT);
  });

  it('counts per client address too: concurrent guesses at many usernames stop at the address limit', async () => {
    const perAddress = await AuthService.create(f.authStore, { ...f.config, bruteForce: { windowMs: 60_000, maxFailuresPerUsername: 1000, maxFailuresPerAddress: 5 } }, f.secretBox, {
      now: () => f.clock.nowMs, scryptCost: TEST_SCRYPT_COST,
      verifyPassword: (password, encoded) => {
        hashCalls++;
        return verifyPassword(password, encoded);
      },
    });
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => perAddress.tokenEndpoint({ ...login, username: `user${i}`, password: 'x' }, '203.0.113.9', 'current')));
    expect(hashCalls).toBe(5);
    expect(replies.filter((r) => r.status === 429)).toHaveLength(25);
    expect((await perAddress.tokenEndpoint(login, '203.0.113.9', 'current')).status).toBe(429);
  });

  it('a success gives its attempt back: logins never use up the address limit', async () => {
    const tight = await AuthService.create(f.authStore, { ...f.config, bruteForce: { windowMs: 60_000, maxFailuresPerUsername: 1000, maxFailuresPerAddress: 3 } }, f.secretBox, {
      now: () => f.clock.nowMs, scryptCost: TEST_SCRYPT_COST,
    });
    expect((await tight.tokenEndpoint({ ...login, password: 'wrong' }, '203.0.113.10', 'current')).status).toBe(400);
    expect((await tight.tokenEndpoint({ ...login, password: 'wrong' }, '203.0.113.10', 'current')).status).toBe(400);
    for (let i = 0; i < 5; i++) expect((await tight.tokenEndpoint(login, '203.0.113.10', 'current')).status).toBe(200);
    expect((await tight.tokenEndpoint({ ...login, password: 'wrong' }, '203.0.113.10', 'current')).status).toBe(400);
    expect((await tight.tokenEndpoint(login, '203.0.113.10', 'current')).status).toBe(429);
  });
});

describe('a deactivated client', () => {
  it('its users get no token from the password grant, the legacy endpoint or the refresh grant', async () => {
    const ok = await post('/auth/token', login);
    expect(ok.status).toBe(200);
    await f.auth.accounts.setClientActive('acme', false);
    const password = await post('/auth/token', login);
    expect(password.status).toBe(400);
    expect(password.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid user credentials' });
    const legacy = await post('/legacy/auth/token', { ...login, client_id: 'legacy-api' });
    expect(legacy.status).toBe(400);
    expect(legacy.body).toMatchObject({ error: 'invalid_grant' });
    const refresh = await post('/auth/token', { client_id: 'messaging-api', grant_type: 'refresh_token', refresh_token: String(ok.body['refresh_token']) });
    expect(refresh.status).toBe(400);
    expect(refresh.body).toMatchObject({ error: 'invalid_grant' });
    // Reactivated, the client's users log in again.
    await f.auth.accounts.setClientActive('acme', true);
    expect((await post('/auth/token', login)).status).toBe(200);
  });
});

describe('log lines of failed logins', () => {
  it('carry a short keyed tag, never the raw username', async () => {
    const typedPassword = 'Tr0ub4dor&3-typed-into-username';
    await post('/auth/token', { ...login, username: typedPassword, password: 'x' });
    await post('/auth/token', { ...login, username: typedPassword, password: 'y' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(logged).toContain('password grant refused');
    expect(logged).not.toContain(typedPassword);
    const tags = logged.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line['msg'] === 'password grant refused').map((line) => line['usernameTag']);
    expect(tags).toHaveLength(2);
    expect(tags[0]).toMatch(/^[0-9a-f]{12}$/);
    expect(tags[1]).toBe(tags[0]);
  });
});

describe('a store that refuses the write', () => {
  it('read-only (SQLite query_only): 503 temporarily_unavailable with Retry-After, not 500', async () => {
    f.store.db.pragma('query_only = ON');
    const reply = await post('/auth/token', login);
    expect(reply.status).toBe(503);
    expect(reply.headers.get('retry-after')).toBe('1');
    expect(reply.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    f.store.db.pragma('query_only = OFF');
    expect((await post('/auth/token', login)).status).toBe(200);
  });

  it('full (SQLITE_FULL from max_page_count): 503 with Retry-After for the password and refresh grants', async () => {
    const ok = await post('/auth/token', login);
    const db = f.store.db;
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);
    // Fill the free space of the existing pages so the next insert needs a page it cannot have.
    const filler = db.prepare("INSERT INTO refresh_sessions (id, user_id, client_id, family_id, token_hash, created_at, expires_at) VALUES (?, 1, 'filler', 'filler', ?, 0, 9e15)");
    let full = false;
    for (let i = 0; i < 100_000 && !full; i++) {
      try {
        filler.run(`filler-${i}`, `${'f'.repeat(40)}${i}`);
      } catch (err) {
        expect((err as { code?: string }).code).toBe('SQLITE_FULL');
        full = true;
      }
    }
    expect(full).toBe(true);
    const password = await post('/auth/token', login);
    expect(password.status).toBe(503);
    expect(password.headers.get('retry-after')).toBe('1');
    expect(password.body).toMatchObject({ error: 'temporarily_unavailable' });
    const refresh = await post('/auth/token', { client_id: 'messaging-api', grant_type: 'refresh_token', refresh_token: String(ok.body['refresh_token']) });
    expect(refresh.status).toBe(503);
    expect(refresh.headers.get('retry-after')).toBe('1');
  });
});
