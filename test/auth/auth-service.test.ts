import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthService, PAT_LAST_USED_INTERVAL_MS } from '../../src/auth/index.js';
import { createLogger } from '../../src/common/log.js';
import { isGatewayError } from '../../src/common/errors.js';
import { createAuthFixture, seedAccounts, START_MS, type AuthFixture } from './auth-fixture.js';

let f: AuthFixture;
beforeEach(async () => {
  f = await createAuthFixture();
  await seedAccounts(f.auth);
});
afterEach(async () => f.close());

function bearer(token: string): string {
  return `Bearer ${token}`;
}

async function codeOf(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (err) {
    if (isGatewayError(err)) return err.code;
    throw err;
  }
  return 'no error';
}

describe('personal access tokens', () => {
  it('authenticate as the user and client they were issued to', async () => {
    const token = await f.auth.createPersonalAccessToken('alice');
    const result = await f.auth.authenticate(bearer(token), 'current');
    expect(result).toEqual({
      ok: true, via: 'pat',
      identity: { userId: expect.any(Number), clientId: expect.any(Number), clientName: 'acme', username: 'alice', isAdmin: true, userActive: true, clientActive: true },
    });
    expect(result.ok && f.auth.isRecognizedAdministrator(result.identity)).toBe(true);
  });

  it('are accepted by the legacy API too', async () => {
    const token = await f.auth.createPersonalAccessToken('alice');
    expect(await f.auth.authenticate(bearer(token), 'legacy')).toMatchObject({ ok: true, via: 'pat' });
  });

  it('are stored only as a hash: the token text is nowhere in the database file', async () => {
    const token = await f.auth.createPersonalAccessToken('alice');
    f.store.db.pragma('wal_checkpoint(TRUNCATE)');
    const bytes = readFileSync(f.dbPath).toString('latin1');
    expect(bytes.includes(token.slice('smsgate_pat_'.length))).toBe(false);
    const row = f.store.db.prepare('SELECT token_hash, token_hint FROM personal_access_tokens').get() as { token_hash: string; token_hint: string };
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.token_hint).toBe(`smsgate_pat_...${token.slice(-4)}`);
  });

  it('is revoked: 401 reason revoked; revoking twice says so', async () => {
    const token = await f.auth.createPersonalAccessToken('alice');
    expect(await f.auth.revokePat(token)).toBe(true);
    expect(await f.auth.authenticate(bearer(token), 'current')).toEqual({ ok: false, reason: 'revoked' });
    expect(await f.auth.revokePat(token)).toBe(false);
  });

  it('expires at its expiry time', async () => {
    const token = await f.auth.createPersonalAccessToken('alice', { expiresAt: START_MS + 60_000 });
    f.clock.nowMs = START_MS + 59_999;
    expect(await f.auth.authenticate(bearer(token), 'current')).toMatchObject({ ok: true });
    f.clock.nowMs = START_MS + 60_000;
    expect(await f.auth.authenticate(bearer(token), 'current')).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses an expiry in the past', async () => {
    expect(await codeOf(() => f.auth.accounts.issuePersonalAccessToken('alice', { expiresAt: START_MS }))).toBe('INVALID_ARGUMENT');
  });

  it('an unknown token of the right form is invalid; a wrong form is malformed', async () => {
    const token = await f.auth.createPersonalAccessToken('alice');
    const other = `smsgate_pat_${'A'.repeat(43)}`;
    expect(await f.auth.authenticate(bearer(other), 'current')).toEqual({ ok: false, reason: 'invalid' });
    expect(await f.auth.authenticate(bearer(token.slice(0, -1)), 'current')).toEqual({ ok: false, reason: 'malformed' });
    expect(await f.auth.authenticate(bearer('not-a-token'), 'current')).toEqual({ ok: false, reason: 'malformed' });
    expect(await f.auth.authenticate(undefined, 'current')).toEqual({ ok: false, reason: 'missing' });
  });

  it('is case-sensitive in its prefix', async () => {
    const token = await f.auth.createPersonalAccessToken('alice');
    const upper = token.replace('smsgate_pat_', 'SMSGATE_pat_');
    expect(await f.auth.authenticate(bearer(upper), 'current')).toMatchObject({ ok: false });
  });

  it('records last use at most once a minute', async () => {
    const token = await f.auth.createPersonalAccessToken('alice');
    const lastUsed = (): number | null => (f.store.db.prepare('SELECT last_used_at FROM personal_access_tokens').get() as { last_used_at: number | null }).last_used_at;
    expect(lastUsed()).toBeNull();
    await f.auth.authenticate(bearer(token), 'current');
    expect(lastUsed()).toBe(START_MS);
    f.clock.nowMs = START_MS + PAT_LAST_USED_INTERVAL_MS - 1;
    await f.auth.authenticate(bearer(token), 'current');
    expect(lastUsed()).toBe(START_MS);
    f.clock.nowMs = START_MS + PAT_LAST_USED_INTERVAL_MS;
    await f.auth.authenticate(bearer(token), 'current');
    expect(lastUsed()).toBe(START_MS + PAT_LAST_USED_INTERVAL_MS);
  });
});

describe('a personal access token when its last use cannot be recorded', () => {
  it('still authenticates, and the failed write is logged without the token', async () => {
    const token = await f.auth.createPersonalAccessToken('alice');
    // A real SQLite refusal of the last_used_at UPDATE, as a read-only or full database gives.
    f.store.db.exec(`CREATE TRIGGER refuse_pat_update BEFORE UPDATE ON personal_access_tokens
      BEGIN SELECT RAISE(ABORT, 'attempt to write a readonly database'); END`);
    const lines: string[] = [];
    const destination = new Writable({ write(chunk: Buffer, _enc, done) { lines.push(chunk.toString('utf8')); done(); } });
    const auth = await AuthService.create(f.authStore, f.config, f.secretBox, { now: () => f.clock.nowMs, logger: createLogger({ destination }) });
    const result = await auth.authenticate(bearer(token), 'current');
    expect(result).toMatchObject({ ok: true, via: 'pat', identity: { username: 'alice' } });
    const warning = lines.find((line) => line.includes('could not record the last use'));
    expect(warning).toContain('readonly database');
    expect(lines.join('')).not.toContain(token.slice('smsgate_pat_'.length));
  });
});

describe('recognized client administrator (403 otherwise)', () => {
  it('a user who is not an administrator authenticates but is not recognized', async () => {
    const result = await f.auth.authenticate(bearer(await f.auth.createPersonalAccessToken('bob')), 'current');
    expect(result).toMatchObject({ ok: true, identity: { username: 'bob', isAdmin: false } });
    expect(result.ok && f.auth.isRecognizedAdministrator(result.identity)).toBe(false);
  });

  it('a deactivated user or client is not recognized', async () => {
    const token = await f.auth.createPersonalAccessToken('alice');
    await f.auth.accounts.setUserActive('alice', false);
    let result = await f.auth.authenticate(bearer(token), 'current');
    expect(result.ok && f.auth.isRecognizedAdministrator(result.identity)).toBe(false);
    await f.auth.accounts.setUserActive('alice', true);
    await f.auth.accounts.setClientActive('acme', false);
    result = await f.auth.authenticate(bearer(token), 'current');
    expect(result.ok && f.auth.isRecognizedAdministrator(result.identity)).toBe(false);
  });
});

describe('account administration', () => {
  it('refuses duplicates and missing parents with codes', async () => {
    expect(await codeOf(() => f.auth.createClient({ name: 'acme' }))).toBe('CLIENT_EXISTS');
    await expect(f.auth.createUser({ clientName: 'acme', username: 'alice', password: 'x' })).rejects.toMatchObject({ code: 'USER_EXISTS' });
    await expect(f.auth.createUser({ clientName: 'nope', username: 'carol', password: 'x' })).rejects.toMatchObject({ code: 'CLIENT_NOT_FOUND' });
    await expect(f.auth.createPersonalAccessToken('nobody')).rejects.toMatchObject({ code: 'USER_NOT_FOUND' });
    expect(await codeOf(() => f.auth.revokePat(`smsgate_pat_${'B'.repeat(43)}`))).toBe('TOKEN_NOT_FOUND');
    expect(await codeOf(() => f.auth.addSender({ clientName: 'nope', sender: 'ACME', type: 0 }))).toBe('CLIENT_NOT_FOUND');
  });

  it('keeps the webhook secret sealed and the URL checked', async () => {
    const created = await f.auth.createClient({ name: 'hooked', webhookUrl: 'https://example.test/dlr', webhookSecret: 'shh-secret' });
    expect(created).toMatchObject({ name: 'hooked', webhookUrl: 'https://example.test/dlr', hasWebhookSecret: true });
    const row = f.store.db.prepare("SELECT webhook_secret_enc FROM clients WHERE name = 'hooked'").get() as { webhook_secret_enc: string };
    expect(row.webhook_secret_enc).not.toContain('shh-secret');
    expect(f.secretBox.open(row.webhook_secret_enc)).toBe('shh-secret');
    expect(await codeOf(() => f.auth.createClient({ name: 'bad', webhookUrl: 'ftp://example.test/' }))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => f.auth.createClient({ name: 'bad', webhookUrl: 'not a url' }))).toBe('INVALID_ARGUMENT');
  });

  it('set-webhook keeps the stored secret unless a new one is given', async () => {
    await f.auth.createClient({ name: 'hooked', webhookUrl: 'http://127.0.0.1:1/a', webhookSecret: 'one' });
    const secretOf = (): string | null => (f.store.db.prepare("SELECT webhook_secret_enc FROM clients WHERE name = 'hooked'").get() as { webhook_secret_enc: string | null }).webhook_secret_enc;
    expect(await f.auth.setWebhook('hooked', { url: 'http://127.0.0.1:1/b' })).toMatchObject({ webhookUrl: 'http://127.0.0.1:1/b', hasWebhookSecret: true });
    expect(f.secretBox.open(secretOf() as string)).toBe('one');
    await f.auth.setWebhook('hooked', { url: 'http://127.0.0.1:1/b', secret: 'two' });
    expect(f.secretBox.open(secretOf() as string)).toBe('two');
    expect(await f.auth.setWebhook('hooked', { url: 'http://127.0.0.1:1/b', secret: null })).toMatchObject({ hasWebhookSecret: false });
    expect(secretOf()).toBeNull();
  });

  it('adds senders of types 0, 1 and 2 and lists them in order', async () => {
    await f.auth.addSender({ clientName: 'acme', sender: ' ACME ', type: 0 });
    await f.auth.addSender({ clientName: 'acme', sender: 'Intl', type: 1 });
    await f.auth.addSender({ clientName: 'acme', sender: '353861234567', type: 2 });
    const result = await f.auth.authenticate(bearer(await f.auth.createPersonalAccessToken('alice')), 'legacy');
    expect(result.ok && (await f.auth.senderList(result.identity))).toEqual([
      { name: 'ACME', type: 0 }, { name: 'Intl', type: 1 }, { name: '353861234567', type: 2 },
    ]);
    expect(await codeOf(() => f.auth.addSender({ clientName: 'acme', sender: 'ACME', type: 1 }))).toBe('SENDER_EXISTS');
    expect(await codeOf(() => f.auth.addSender({ clientName: 'acme', sender: 'X', type: 3 }))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => f.auth.addSender({ clientName: 'acme', sender: 'ABCDEFGHIJKL', type: 0 }))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(() => f.auth.addSender({ clientName: 'acme', sender: 'ABC', type: 2 }))).toBe('INVALID_ARGUMENT');
  });

  it('stores passwords as scrypt hashes', async () => {
    const row = f.store.db.prepare("SELECT password_hash FROM users WHERE username = 'alice'").get() as { password_hash: string };
    expect(row.password_hash).toMatch(/^scrypt\$/);
    expect(row.password_hash).not.toContain('correct horse');
  });
});

describe('JWT signing key', () => {
  it('is made once, kept sealed in the store and shared by a second process', async () => {
    const keys = f.store.db.prepare('SELECT kid, alg, private_jwk_enc, public_jwk FROM signing_keys').all() as { alg: string; private_jwk_enc: string; public_jwk: string }[];
    expect(keys).toHaveLength(1);
    expect(keys[0]?.alg).toBe('ES256');
    expect(keys[0]?.private_jwk_enc.startsWith('v1.')).toBe(true);
    expect(JSON.parse(keys[0]?.public_jwk ?? '{}')).not.toHaveProperty('d');

    const other = await f.reopen();
    expect(f.store.db.prepare('SELECT COUNT(*) AS n FROM signing_keys').get()).toEqual({ n: 1 });
    const issued = await other.tokenEndpoint({ client_id: 'messaging-api', grant_type: 'password', username: 'alice', password: 'correct horse' }, '127.0.0.1', 'current');
    expect(issued.status).toBe(200);
    expect(await f.auth.authenticate(bearer(String(issued.body['access_token'])), 'current')).toMatchObject({ ok: true, via: 'jwt' });
  });
});

describe('a configured PAT prefix', () => {
  it('is used for new tokens and matched case-sensitively', async () => {
    const custom = await createAuthFixture({ patPrefix: 'Acme-SMS' });
    try {
      await seedAccounts(custom.auth);
      const token = await custom.auth.createPersonalAccessToken('alice');
      expect(token).toMatch(/^Acme-SMS_pat_[0-9A-Za-z]{43}$/);
      expect(await custom.auth.authenticate(bearer(token), 'current')).toMatchObject({ ok: true, via: 'pat' });
      expect(await custom.auth.authenticate(bearer(token.replace('Acme-SMS', 'acme-sms')), 'current')).toEqual({ ok: false, reason: 'malformed' });
      const otherPrefix = token.replace('Acme-SMS', 'smsgate');
      expect(await custom.auth.authenticate(bearer(otherPrefix), 'current')).toEqual({ ok: false, reason: 'malformed' });
    } finally {
      await custom.close();
    }
  });
});
