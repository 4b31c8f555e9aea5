/**
 * Store conformance: accounts and credentials behave the same on SQLite and
 * PostgreSQL: ids, lookups, personal access tokens, refresh rotation and reuse detection.
 */
import { expect, it } from 'vitest';
import { describeEachBackend } from './backends.js';
import { T0_MS } from './seed.js';

describeEachBackend('auth store', (open) => {
  it('creates clients and users and finds them by name and id, with booleans as the store gives them', async () => {
    const { stores } = await open();
    const clientId = await stores.auth.insertClient({ name: 'acme', webhookUrl: 'https://h.example', webhookSecretEnc: 'sealed' }, T0_MS);
    const userId = await stores.auth.insertUser({ clientId, username: 'ann', passwordHash: 'h1', isAdmin: true }, T0_MS + 1);
    expect(await stores.auth.clientByName('acme')).toEqual({
      id: clientId, name: 'acme', active: 1, webhook_url: 'https://h.example', webhook_secret_enc: 'sealed', created_at: T0_MS,
      inbound_webhook_url: null, optout_keywords: null,
    });
    const ann = { userId, username: 'ann', passwordHash: 'h1', isAdmin: true, userActive: true, clientId, clientName: 'acme', clientActive: true };
    expect(await stores.auth.userByUsername('ann')).toEqual(ann);
    expect(await stores.auth.userById(userId)).toEqual(ann);
    await stores.auth.setUserActive(userId, false);
    await stores.auth.setClientActive(clientId, false);
    expect(await stores.auth.userById(userId)).toEqual({ ...ann, userActive: false, clientActive: false });
    expect(await stores.auth.userByUsername('nobody')).toBeUndefined();
    expect(await stores.auth.clientByName('nobody')).toBeUndefined();
  });

  it('refuses a second client with the same name and leaves the first as it was', async () => {
    const { stores } = await open();
    await stores.auth.insertClient({ name: 'acme', webhookUrl: null, webhookSecretEnc: null }, T0_MS);
    const refusal = await stores.auth.insertClient({ name: 'acme', webhookUrl: 'https://x', webhookSecretEnc: null }, T0_MS).then(() => undefined, (err: unknown) => err);
    // The codes the seam's isUniqueViolation turns into CLIENT_EXISTS: SQLite's extended code, PostgreSQL's SQLSTATE 23505.
    expect(['SQLITE_CONSTRAINT_UNIQUE', '23505']).toContain((refusal as { code?: string } | undefined)?.code);
    expect((await stores.auth.clientByName('acme'))?.webhook_url).toBeNull();
  });

  it('keeps personal access tokens by hash: touched at most once per interval, revoked once', async () => {
    const { stores } = await open();
    const clientId = await stores.auth.insertClient({ name: 'acme', webhookUrl: null, webhookSecretEnc: null }, T0_MS);
    const userId = await stores.auth.insertUser({ clientId, username: 'ann', passwordHash: 'h', isAdmin: false }, T0_MS);
    const patId = await stores.auth.insertPat({ userId, tokenHash: 'th', tokenHint: 'abcd', expiresAt: null }, T0_MS);
    await stores.auth.touchPat(patId, T0_MS + 1000, 60_000);
    await stores.auth.touchPat(patId, T0_MS + 2000, 60_000);
    expect((await stores.auth.patByHash('th'))?.last_used_at).toBe(T0_MS + 1000);
    await stores.auth.touchPat(patId, T0_MS + 61_000, 60_000);
    expect((await stores.auth.patByHash('th'))?.last_used_at).toBe(T0_MS + 61_000);
    expect(await stores.auth.revokePat(patId, T0_MS + 70_000)).toBe(true);
    expect(await stores.auth.revokePat(patId, T0_MS + 80_000)).toBe(false);
    expect((await stores.auth.patByHash('th'))?.revoked_at).toBe(T0_MS + 70_000);
  });

  it('rotates a refresh session once: the second rotation of the same token is refused; families revoke together', async () => {
    const { stores } = await open();
    const clientId = await stores.auth.insertClient({ name: 'acme', webhookUrl: null, webhookSecretEnc: null }, T0_MS);
    const userId = await stores.auth.insertUser({ clientId, username: 'ann', passwordHash: 'h', isAdmin: false }, T0_MS);
    const session = (id: string, hash: string) => ({ id, user_id: userId, client_id: 'messaging-api', family_id: 'fam', token_hash: hash, created_at: T0_MS, expires_at: T0_MS + 1800_000 });
    await stores.auth.insertRefreshSession(session('s1', 'h1'));
    // Two rotations of s1 at once: exactly one wins (the row lock / single writer).
    const results = await Promise.all([
      stores.auth.rotateRefreshSession('s1', session('s2', 'h2'), T0_MS + 1),
      stores.auth.rotateRefreshSession('s1', session('s3', 'h3'), T0_MS + 1),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await stores.auth.refreshSessionByHash('h1'))?.used_at).toBe(T0_MS + 1);
    expect([await stores.auth.refreshSessionByHash('h2'), await stores.auth.refreshSessionByHash('h3')].filter((s) => s !== undefined)).toHaveLength(1);
    expect(await stores.auth.isRefreshFamilyRevoked('fam')).toBe(false);
    await stores.auth.revokeRefreshFamily('fam', T0_MS + 5);
    expect(await stores.auth.isRefreshFamilyRevoked('fam')).toBe(true);
    expect(await stores.auth.deleteExpiredRefreshSessions(T0_MS + 1800_001)).toBe(2);
    expect(await stores.auth.refreshSessionByHash('h1')).toBeUndefined();
  });

  it('keeps signing keys and senders in order', async () => {
    const { stores } = await open();
    await stores.auth.insertSigningKey({ kid: 'k2', alg: 'ES256', private_jwk_enc: 'p2', public_jwk: '{}', created_at: T0_MS + 1 });
    await stores.auth.insertSigningKey({ kid: 'k1', alg: 'ES256', private_jwk_enc: 'p1', public_jwk: '{}', created_at: T0_MS });
    expect((await stores.auth.signingKeys()).map((k) => k.kid)).toEqual(['k1', 'k2']);
    const clientId = await stores.auth.insertClient({ name: 'acme', webhookUrl: null, webhookSecretEnc: null }, T0_MS);
    await stores.auth.insertSender({ clientId, name: 'Zeta', type: 1 }, T0_MS);
    await stores.auth.insertSender({ clientId, name: 'Alpha', type: 0 }, T0_MS);
    expect(await stores.auth.sendersOfClient(clientId)).toEqual([{ name: 'Zeta', type: 1 }, { name: 'Alpha', type: 0 }]);
    expect(await stores.campaigns.senders(clientId)).toEqual([{ name: 'Alpha', type: 0 }, { name: 'Zeta', type: 1 }]);
    expect(await stores.campaigns.senderType(clientId, 'Zeta')).toBe(1);
    expect(await stores.campaigns.senderType(clientId, 'zeta')).toBeUndefined();
  });
});
