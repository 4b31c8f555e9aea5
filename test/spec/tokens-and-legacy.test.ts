/**
 * SPEC.md "POST {auth_url}/token", "Token Response", "OAuth Error", "Authentication" §3-6,
 * "Legacy v2: POST {legacy_auth_url}/token", "Legacy v2: GET {legacy_base_url}/api/v2/senderlist",
 * "Sender entry (legacy v2)" and "Limits" (legacy tokens 120 / 1200 seconds), against a real
 * `smsgate serve` with the default auth config (messaging-api 300 s / 1800 s; legacy-api).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, getWithToken, postForm, postJson, SpecServer, type SpecAccount } from './spec-server.js';

const CURRENT_CLIENT_ID = 'messaging-api';
const LEGACY_CLIENT_ID = 'legacy-api';

let server: SpecServer;
let acme: SpecAccount;
let plainUser: SpecAccount;

beforeAll(async () => {
  server = await SpecServer.start();
  acme = await server.createAccount('acme', { senders: [{ name: 'Zulu', type: 1 }, { name: 'Acme', type: 0 }, { name: '353861234567', type: 2 }] });
  plainUser = await server.createAccount('plain', { admin: false, senders: [{ name: 'Plain', type: 0 }] });
  // Another account's senders must never appear in acme's list.
  await server.createAccount('other', { senders: [{ name: 'OtherCo', type: 0 }] });
}, 180_000);
afterAll(async () => server?.stop());

const CAMPAIGN = { text: 'Token test', from: 'Acme', recipientInfo: [{ msisdn: '447700900123' }] };

function passwordGrant(clientId = CURRENT_CLIENT_ID, username = acme.username, password = ADMIN_PASSWORD): Record<string, string> {
  return { client_id: clientId, grant_type: 'password', username, password };
}

async function token(path: string, fields: Record<string, string>): Promise<{ res: Response; body: Record<string, unknown> }> {
  const res = await postForm(server.url(path), fields);
  return { res, body: (await res.json()) as Record<string, unknown> };
}

async function expectOAuthError(path: string, fields: Record<string, string>, status: number, error: string): Promise<void> {
  const { res, body } = await token(path, fields);
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(body['error']).toBe(error);
  if ('error_description' in body) expect(typeof body['error_description']).toBe('string');
}

describe('POST /auth/token: password grant', () => {
  it('answers 200 application/json with the Token Response fields and types', async () => {
    const { res, body } = await token('/auth/token', passwordGrant());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(typeof body['access_token']).toBe('string');
    expect((body['access_token'] as string).length).toBeGreaterThan(0);
    expect(body['token_type']).toBe('Bearer');
    expect(body['expires_in']).toBe(300);
    expect(body['refresh_expires_in']).toBe(1800);
    expect(typeof body['refresh_token']).toBe('string');
    expect(body['not-before-policy']).toBe(0);
    expect(typeof body['session_state']).toBe('string');
    expect(typeof body['scope']).toBe('string');
    for (const field of ['expires_in', 'refresh_expires_in', 'not-before-policy']) expect(Number.isInteger(body[field])).toBe(true);
  });

  it('issues an access token the campaign API accepts (POST 202, GET summary)', async () => {
    const { body } = await token('/auth/token', passwordGrant());
    const access = body['access_token'] as string;
    const created = await postJson(server.url('/v1/campaign'), access, CAMPAIGN);
    expect(created.status).toBe(202);
  });

  it('answers 400 invalid_grant for a wrong password or an unknown user', async () => {
    await expectOAuthError('/auth/token', passwordGrant(CURRENT_CLIENT_ID, acme.username, 'wrong password'), 400, 'invalid_grant');
    await expectOAuthError('/auth/token', passwordGrant(CURRENT_CLIENT_ID, 'nobody', ADMIN_PASSWORD), 400, 'invalid_grant');
  });

  it('answers 400 OAuth errors when username, password or grant_type is missing', async () => {
    const { username: _u, ...noUsername } = passwordGrant();
    const { password: _p, ...noPassword } = passwordGrant();
    const { grant_type: _g, ...noGrant } = passwordGrant();
    for (const fields of [noUsername, noPassword, noGrant]) {
      const { res, body } = await token('/auth/token', fields);
      expect(res.status).toBe(400);
      expect(typeof body['error']).toBe('string');
    }
  });

  it('answers 400 unsupported_grant_type for another grant type', async () => {
    await expectOAuthError('/auth/token', { client_id: CURRENT_CLIENT_ID, grant_type: 'client_credentials' }, 400, 'unsupported_grant_type');
  });

  it('answers 401 invalid_client for an unknown client_id', async () => {
    await expectOAuthError('/auth/token', passwordGrant('someone-else'), 401, 'invalid_client');
  });

  it('gives a non-administrator a token, and the campaign API answers 403', async () => {
    const { res, body } = await token('/auth/token', passwordGrant(CURRENT_CLIENT_ID, plainUser.username));
    expect(res.status).toBe(200);
    const created = await postJson(server.url('/v1/campaign'), body['access_token'] as string, CAMPAIGN);
    expect(created.status).toBe(403);
  });
});

describe('POST /auth/token: refresh_token grant', () => {
  it('answers 200 with a new access token that the API accepts', async () => {
    const first = (await token('/auth/token', passwordGrant())).body;
    const { res, body } = await token('/auth/token', { client_id: CURRENT_CLIENT_ID, grant_type: 'refresh_token', refresh_token: first['refresh_token'] as string });
    expect(res.status).toBe(200);
    expect(body['token_type']).toBe('Bearer');
    expect(Number.isInteger(body['expires_in'])).toBe(true);
    expect(typeof body['access_token']).toBe('string');
    expect(typeof body['refresh_token']).toBe('string');
    expect((await postJson(server.url('/v1/campaign'), body['access_token'] as string, CAMPAIGN)).status).toBe(202);
  });

  it('answers 400 invalid_grant for an invalid refresh token', async () => {
    await expectOAuthError('/auth/token', { client_id: CURRENT_CLIENT_ID, grant_type: 'refresh_token', refresh_token: 'not-a-refresh-token' }, 400, 'invalid_grant');
  });

  it('answers 400 invalid_request when refresh_token is missing', async () => {
    await expectOAuthError('/auth/token', { client_id: CURRENT_CLIENT_ID, grant_type: 'refresh_token' }, 400, 'invalid_request');
  });
});

describe('POST /legacy/auth/token', () => {
  it('answers 200 with access_token, expires_in 120, refresh_expires_in 1200, refresh_token, token_type Bearer, scope', async () => {
    const { res, body } = await token('/legacy/auth/token', passwordGrant(LEGACY_CLIENT_ID));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(body).toMatchObject({ expires_in: 120, refresh_expires_in: 1200, token_type: 'Bearer' });
    expect(typeof body['access_token']).toBe('string');
    expect(typeof body['refresh_token']).toBe('string');
    expect(typeof body['scope']).toBe('string');
  });

  it('answers 401 invalid_client for a client id other than the legacy one', async () => {
    await expectOAuthError('/legacy/auth/token', passwordGrant(CURRENT_CLIENT_ID), 401, 'invalid_client');
  });

  it('answers 400 invalid_grant for bad credentials', async () => {
    await expectOAuthError('/legacy/auth/token', passwordGrant(LEGACY_CLIENT_ID, acme.username, 'wrong'), 400, 'invalid_grant');
  });
});

describe('GET /api/v2/senderlist', () => {
  it("answers 200 with a JSON array of the account's sender entries {name, type}", async () => {
    const res = await getWithToken(server.url('/api/v2/senderlist'), acme.token);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const list = (await res.json()) as Array<Record<string, unknown>>;
    expect(Array.isArray(list)).toBe(true);
    for (const entry of list) expect(Object.keys(entry).sort()).toEqual(['name', 'type']);
    expect(new Set(list.map((e) => `${String(e['name'])}:${String(e['type'])}`))).toEqual(new Set(['Zulu:1', 'Acme:0', '353861234567:2']));
  });

  it('accepts a legacy access token from the legacy token endpoint', async () => {
    const { body } = await token('/legacy/auth/token', passwordGrant(LEGACY_CLIENT_ID));
    const res = await getWithToken(server.url('/api/v2/senderlist'), body['access_token'] as string);
    expect(res.status).toBe(200);
    expect(((await res.json()) as unknown[]).length).toBe(3);
  });

  const unauthorized: Array<[string, string | undefined]> = [
    ['no token', undefined],
    ['an invalid token', 'not-a-valid-token'],
    ['an unknown personal access token', 'smsgate_pat_0000000000000000000000000000000000000000000'],
  ];
  for (const [name, bearer] of unauthorized) {
    it(`answers 401 {success: false, message, errors: [strings]} for ${name}`, async () => {
      const res = await getWithToken(server.url('/api/v2/senderlist'), bearer);
      expect(res.status).toBe(401);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body['success']).toBe(false);
      expect(typeof body['message']).toBe('string');
      expect(Array.isArray(body['errors'])).toBe(true);
      for (const error of body['errors'] as unknown[]) expect(typeof error).toBe('string');
    });
  }
});

describe('Secrets in the server log', () => {
  it('no password, PAT, access token or refresh token used above appears in any log line', async () => {
    const { body } = await token('/auth/token', passwordGrant());
    await postJson(server.url('/v1/campaign'), body['access_token'] as string, CAMPAIGN);
    await getWithToken(server.url('/api/v2/senderlist'), acme.token);
    const log = server.allLines.join('\n');
    expect(log).toContain('"status":202');
    for (const secret of [ADMIN_PASSWORD, acme.token, body['access_token'] as string, body['refresh_token'] as string]) {
      expect(log.includes(secret), secret.slice(0, 12)).toBe(false);
    }
  });
});

describe('Lifetimes come from the config and an expired access token is 401', () => {
  let shortLived: SpecServer;
  let account: SpecAccount;
  beforeAll(async () => {
    shortLived = await SpecServer.start({ config: { auth: { accessTokenSeconds: 1, refreshTokenSeconds: 60 } } });
    account = await shortLived.createAccount('brief', { senders: [{ name: 'Brief', type: 0 }] });
  }, 180_000);
  afterAll(async () => shortLived?.stop());

  it('reports expires_in 1 and refuses the token with 401 once it has expired', async () => {
    const res = await postForm(shortLived.url('/auth/token'), passwordGrant(CURRENT_CLIENT_ID, account.username));
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ expires_in: 1, refresh_expires_in: 60 });
    const access = body['access_token'] as string;
    // exp is whole seconds after iat: 2.1 s later it has passed whatever the sub-second phase.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const created = await postJson(shortLived.url('/v1/campaign'), access, { text: 'late', from: 'Brief', recipientInfo: [{ msisdn: '447700900123' }] });
    expect(created.status).toBe(401);
    expect(created.headers.get('www-authenticate')).toBe('Bearer');
  });
});
