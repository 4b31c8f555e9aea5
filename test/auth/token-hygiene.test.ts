/** What the token endpoints leave behind: log lines without secrets, and no stale refresh sessions. */
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthService, REFRESH_PURGE_INTERVAL_MS } from '../../src/auth/index.js';
import { createLogger } from '../../src/common/log.js';
import { createAuthFixture, seedAccounts, START_MS, TEST_SCRYPT_COST, type AuthFixture } from './auth-fixture.js';

let f: AuthFixture;
beforeEach(async () => {
  f = await createAuthFixture();
  await seedAccounts(f.auth);
});
afterEach(async () => f.close());

const login = { client_id: 'messaging-api', grant_type: 'password', username: 'alice', password: 'correct horse' };

function sessionCount(): number {
  return (f.store.db.prepare('SELECT COUNT(*) AS n FROM refresh_sessions').get() as { n: number }).n;
}

describe('token endpoint hygiene', () => {
  it('never logs passwords, access tokens or refresh tokens', async () => {
    const stream = new PassThrough();
    let logged = '';
    stream.on('data', (chunk: Buffer) => {
      logged += chunk.toString('utf8');
    });
    const auth = await AuthService.create(f.authStore, f.config, f.secretBox, {
      now: () => f.clock.nowMs, scryptCost: TEST_SCRYPT_COST, logger: createLogger({ level: 'trace', destination: stream }),
    });
    await auth.tokenEndpoint({ ...login, password: 'hunter2-wrong' }, '127.0.0.1', 'current');
    const ok = await auth.tokenEndpoint(login, '127.0.0.1', 'current');
    await auth.tokenEndpoint({ client_id: 'messaging-api', grant_type: 'refresh_token', refresh_token: 'guessed-refresh-value' }, '127.0.0.1', 'current');
    const refreshed = await auth.tokenEndpoint({ client_id: 'messaging-api', grant_type: 'refresh_token', refresh_token: String(ok.body['refresh_token']) }, '127.0.0.1', 'current');
    expect(refreshed.status).toBe(200);
    await new Promise((resolve) => setImmediate(resolve));
    expect(logged).toContain('password grant refused');
    expect(logged).toContain('refresh grant refused');
    for (const secret of ['hunter2-wrong', 'correct horse', 'guessed-refresh-value', ok.body['access_token'], ok.body['refresh_token'], refreshed.body['refresh_token']]) {
      expect(logged).not.toContain(String(secret));
    }
  });

  it('the legacy endpoint refreshes with legacy lifetimes; a current refresh token does not work there', async () => {
    const legacyLogin = { ...login, client_id: 'legacy-api' };
    const first = await f.auth.tokenEndpoint(legacyLogin, '127.0.0.1', 'legacy');
    const refreshed = await f.auth.tokenEndpoint({ client_id: 'legacy-api', grant_type: 'refresh_token', refresh_token: String(first.body['refresh_token']) }, '127.0.0.1', 'legacy');
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({ expires_in: 120, refresh_expires_in: 1200, token_type: 'Bearer' });
    const current = await f.auth.tokenEndpoint(login, '127.0.0.1', 'current');
    const crossed = await f.auth.tokenEndpoint({ client_id: 'legacy-api', grant_type: 'refresh_token', refresh_token: String(current.body['refresh_token']) }, '127.0.0.1', 'legacy');
    expect(crossed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('deletes expired refresh sessions at most once an hour', async () => {
    await f.auth.tokenEndpoint(login, '127.0.0.1', 'current');
    await f.auth.tokenEndpoint(login, '127.0.0.1', 'current');
    expect(sessionCount()).toBe(2);
    f.clock.nowMs = START_MS + REFRESH_PURGE_INTERVAL_MS - 1;
    await f.auth.tokenEndpoint({ ...login, password: 'wrong' }, '127.0.0.1', 'current');
    expect(sessionCount()).toBe(2);
    f.clock.nowMs = START_MS + REFRESH_PURGE_INTERVAL_MS;
    await f.auth.tokenEndpoint({ ...login, password: 'wrong' }, '127.0.0.1', 'current');
    expect(sessionCount()).toBe(0);
  });
});
