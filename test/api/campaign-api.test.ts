import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_PASSWORD, startApiFixture, type Account, type ApiFixture } from '../support/api-fixture.js';
import { fetchChecked } from '../support/openapi-check.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function validBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { text: 'Hello', from: 'Acme', recipientInfo: [{ msisdn: '353871234567', ClientReference: 'r1' }], ...overrides };
}

async function waitForSummary(fixture: ApiFixture, token: string, id: string): Promise<Response> {
  for (let i = 0; i < 500; i++) {
    const res = await fixture.getSummary(token, id);
    if (res.status !== 404) return res;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`campaign ${id} never became ready`);
}

describe('campaign API over a real server', () => {
  let fixture: ApiFixture;
  let admin: Account;

  beforeAll(async () => {
    fixture = await startApiFixture();
    admin = await fixture.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
  });
  afterAll(async () => {
    await fixture.close();
  });

  describe('GET /health', () => {
    it('answers 200 text/plain Healthy without a token', async () => {
      const res = await fetchChecked(`${fixture.baseUrl}/health`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toBe('Healthy');
    });
  });

  describe('POST /v1/campaign', () => {
    it('answers 202 with the id and the fixed message, and stores the campaign queued', async () => {
      await fixture.processor.stop();
      const res = await fixture.postCampaign(admin.token, validBody());
      expect(res.status).toBe(202);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await res.json()) as { id: string; message: string };
      expect(body.message).toBe('Campaign received to be processed');
      expect(body.id).toMatch(UUID);
      const row = fixture.store.db.prepare('SELECT state, name, sender, client_id FROM campaigns WHERE id = ?').get(body.id);
      expect(row).toEqual({ state: 'queued', name: 'API Broadcast', sender: 'Acme', client_id: admin.clientId });
      fixture.processor.start();
    });

    it('answers 401 with no body and WWW-Authenticate: Bearer when the token is missing', async () => {
      const res = await fixture.postCampaign(undefined, validBody());
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await res.text()).toBe('');
    });

    it.each([
      ['an unknown token', 'Bearer smsgate_pat_0000000000000000000000000000000000000000000'],
      ['a malformed header', 'Basic dXNlcjpwYXNz'],
      ['an empty bearer', 'Bearer '],
    ])('answers 401 for %s', async (_name, header) => {
      const res = await fetchChecked(`${fixture.baseUrl}/v1/campaign`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: header },
        body: JSON.stringify(validBody()),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await res.text()).toBe('');
    });

    it('answers 401 for a revoked token', async () => {
      const account = await fixture.createAccount();
      expect((await fixture.postCampaign(account.token, validBody())).status).toBe(202);
      expect(await fixture.auth.revokePat(account.token)).toBe(true);
      const res = await fixture.postCampaign(account.token, validBody());
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    });

    it('answers 401 for an expired token', async () => {
      await fixture.createAccount({ username: 'expiring-user' });
      const expiresAt = Date.now() + 60_000;
      const token = await fixture.auth.createPersonalAccessToken('expiring-user', { expiresAt });
      expect((await fixture.postCampaign(token, validBody())).status).toBe(202);
      // Moved into the past in the store: the clock of the running server is real.
      fixture.store.db.prepare('UPDATE personal_access_tokens SET expires_at = ? WHERE expires_at = ?').run(Date.now() - 1, expiresAt);
      expect((await fixture.postCampaign(token, validBody())).status).toBe(401);
    });

    it('answers 401 for a token whose prefix casing was changed', async () => {
      const account = await fixture.createAccount();
      expect((await fixture.postCampaign(account.token.replace('smsgate_pat_', 'SMSGATE_pat_'), validBody())).status).toBe(401);
    });

    it('accepts an OAuth access token from POST /auth/token (password grant)', async () => {
      await fixture.createAccount({ username: 'oauth-user' });
      const tokenRes = await fetchChecked(`${fixture.baseUrl}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: 'messaging-api', grant_type: 'password', username: 'oauth-user', password: FIXTURE_PASSWORD }),
      });
      expect(tokenRes.status).toBe(200);
      const { access_token: accessToken } = (await tokenRes.json()) as { access_token: string };
      const res = await fixture.postCampaign(accessToken, validBody());
      expect(res.status).toBe(202);
      const { id } = (await res.json()) as { id: string };
      expect((await waitForSummary(fixture, accessToken, id)).status).toBe(200);
    });

    it('refuses a legacy access token on the current API with 401', async () => {
      await fixture.createAccount({ username: 'legacy-user' });
      const tokenRes = await fetchChecked(`${fixture.baseUrl}/legacy/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: 'legacy-api', grant_type: 'password', username: 'legacy-user', password: FIXTURE_PASSWORD }),
      });
      expect(tokenRes.status).toBe(200);
      const { access_token: legacyToken } = (await tokenRes.json()) as { access_token: string };
      expect((await fixture.postCampaign(legacyToken, validBody())).status).toBe(401);
      const senders = await fetchChecked(`${fixture.baseUrl}/api/v2/senderlist`, { headers: { authorization: `Bearer ${legacyToken}` } });
      expect(senders.status).toBe(200);
    });

    it.each([
      ['a user who is not an administrator', { admin: false }],
      ['a deactivated user', { userActive: false }],
      ['a user of a deactivated client', { clientActive: false }],
    ])('answers 403 problem+json for %s', async (_name, options) => {
      const account = await fixture.createAccount(options);
      const res = await fixture.postCampaign(account.token, validBody());
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await res.json()).toEqual({
        title: 'Forbidden',
        status: 403,
        detail: 'Authenticated user is not a recognized client administrator',
      });
    });

    it('checks authentication before the body: a bad token with a bad body is 401', async () => {
      const res = await fixture.postCampaign('nope', '{not json');
      expect(res.status).toBe(401);
    });

    it.each([
      ['not JSON', 'application/json', '{"text": '],
      ['empty', 'application/json', ''],
      ['a JSON array', 'application/json', '[]'],
      ['JSON null', 'application/json', 'null'],
      ['sent as text/plain', 'text/plain', JSON.stringify(validBody())],
      ['sent as form data', 'application/x-www-form-urlencoded', 'text=hi'],
    ])('answers 400 Validation Error when the body is %s', async (_name, contentType, body) => {
      const res = await fetchChecked(`${fixture.baseUrl}/v1/campaign`, {
        method: 'POST',
        headers: { 'content-type': contentType, authorization: `Bearer ${admin.token}` },
        body,
      });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = (await res.json()) as { title: string; status: number; detail: string };
      expect(problem.title).toBe('Validation Error');
      expect(problem.status).toBe(400);
      expect(problem.detail.length).toBeGreaterThan(0);
    });

    it('answers 400 for a body that is not valid UTF-8', async () => {
      const res = await fetchChecked(`${fixture.baseUrl}/v1/campaign`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.token}` },
        body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toContain('UTF-8');
    });

    it('accepts application/json with a charset parameter and a UTF-8 BOM', async () => {
      const res = await fetchChecked(`${fixture.baseUrl}/v1/campaign`, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${admin.token}` },
        body: '\uFEFF' + JSON.stringify(validBody()),
      });
      expect(res.status).toBe(202);
    });

    it('answers 503 problem+json with Retry-After when the store refuses the campaign, and stores nothing', async () => {
      const count = (): unknown => fixture.store.db.prepare('SELECT COUNT(*) AS n FROM campaigns').get();
      const before = count();
      // A temporary trigger makes exactly the campaign INSERT fail, as a full disk would.
      fixture.store.db.exec("CREATE TEMP TRIGGER refuse_campaigns BEFORE INSERT ON campaigns BEGIN SELECT RAISE(ABORT, 'refused'); END");
      try {
        const res = await fixture.postCampaign(admin.token, validBody());
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('1');
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(await res.json()).toMatchObject({ title: 'Service Unavailable', status: 503 });
      } finally {
        fixture.store.db.exec('DROP TRIGGER refuse_campaigns');
      }
      expect(count()).toEqual(before);
    });

    it('matches property names case-insensitively and ignores unknown ones', async () => {
      const res = await fixture.postCampaign(admin.token, {
        TEXT: 'Hi', From: 'Acme', RecipientInfo: [{ MSISDN: '353871111111', clientreference: 'x' }],
        CampaignName: 'Case', extra: { anything: true },
      });
      expect(res.status).toBe(202);
      const { id } = (await res.json()) as { id: string };
      const row = fixture.store.db.prepare('SELECT name, text FROM campaigns WHERE id = ?').get(id);
      expect(row).toEqual({ name: 'Case', text: 'Hi' });
    });
  });

  describe('GET /v1/campaign/{id}', () => {
    it('returns the summary once the campaign is ready', async () => {
      const res = await fixture.postCampaign(admin.token, validBody({
        recipientInfo: [{ msisdn: '353871234567' }, { msisdn: '0871234567' }, { msisdn: '447700900123' }],
      }));
      const { id } = (await res.json()) as { id: string };
      const summary = await waitForSummary(fixture, admin.token, id);
      expect(summary.status).toBe(200);
      expect(summary.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await summary.json()).toEqual({ totalSent: 2, delivered: 0, undelivered: 0, pending: 2 });
    });

    it('counts delivered, undelivered and pending from the recipients', async () => {
      const res = await fixture.postCampaign(admin.token, validBody({
        recipientInfo: ['353870000001', '353870000002', '353870000003', '353870000004'].map((msisdn) => ({ msisdn })),
      }));
      const { id } = (await res.json()) as { id: string };
      await waitForSummary(fixture, admin.token, id);
      const setStatus = fixture.store.db.prepare('UPDATE recipients SET status = ? WHERE campaign_id = ? AND msisdn = ?');
      setStatus.run('delivered', id, '353870000001');
      setStatus.run('delivered', id, '353870000002');
      setStatus.run('undelivered', id, '353870000003');
      const summary = await fixture.getSummary(admin.token, id);
      expect(await summary.json()).toEqual({ totalSent: 4, delivered: 2, undelivered: 1, pending: 1 });
    });

    it('accepts the id in upper case', async () => {
      const res = await fixture.postCampaign(admin.token, validBody());
      const { id } = (await res.json()) as { id: string };
      await waitForSummary(fixture, admin.token, id);
      expect((await fixture.getSummary(admin.token, id.toUpperCase())).status).toBe(200);
    });

    it.each(['not-a-uuid', '12345', '0d7f0b3e-6f3c-4f9a-9d6e-2b1c3a4d5e6', '0d7f0b3e6f3c4f9a9d6e2b1c3a4d5e6f0'])(
      'answers 400 problem+json naming id for %s',
      async (badId) => {
        const res = await fixture.getSummary(admin.token, badId);
        expect(res.status).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        const problem = (await res.json()) as { title: string; detail: string; status: number };
        expect(problem.status).toBe(400);
        expect(problem.detail).toContain('id');
      },
    );

    it('answers 404 problem+json for an unknown id', async () => {
      const res = await fixture.getSummary(admin.token, '0d7f0b3e-6f3c-4f9a-9d6e-2b1c3a4d5e6f');
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await res.json()).toMatchObject({ title: 'Not Found', status: 404 });
    });

    it("answers 404 for another account's campaign", async () => {
      const res = await fixture.postCampaign(admin.token, validBody());
      const { id } = (await res.json()) as { id: string };
      await waitForSummary(fixture, admin.token, id);
      const other = await fixture.createAccount();
      expect((await fixture.getSummary(other.token, id)).status).toBe(404);
    });

    it('answers 404 for a draft, which is never processed', async () => {
      const res = await fixture.postCampaign(admin.token, validBody({ createAsDraft: true }));
      expect(res.status).toBe(202);
      const { id } = (await res.json()) as { id: string };
      await fixture.processor.processOnce();
      expect((await fixture.getSummary(admin.token, id)).status).toBe(404);
      const row = fixture.store.db.prepare('SELECT state FROM campaigns WHERE id = ?').get(id);
      expect(row).toEqual({ state: 'draft' });
    });

    it('answers 404 while the campaign is still queued', async () => {
      await fixture.processor.stop();
      const res = await fixture.postCampaign(admin.token, validBody());
      const { id } = (await res.json()) as { id: string };
      expect((await fixture.getSummary(admin.token, id)).status).toBe(404);
      fixture.processor.start();
      expect((await waitForSummary(fixture, admin.token, id)).status).toBe(200);
    });

    it('answers 401 without a token and 403 for a non-administrator', async () => {
      const id = '0d7f0b3e-6f3c-4f9a-9d6e-2b1c3a4d5e6f';
      const unauthenticated = await fixture.getSummary(undefined, id);
      expect(unauthenticated.status).toBe(401);
      expect(await unauthenticated.text()).toBe('');
      const nonAdmin = await fixture.createAccount({ admin: false });
      const forbidden = await fixture.getSummary(nonAdmin.token, id);
      expect(forbidden.status).toBe(403);
      expect(await forbidden.json()).toEqual({
        title: 'Forbidden', status: 403, detail: 'Authenticated user is not a recognized client administrator',
      });
    });

    it('authenticates before checking the id: a bad id without a token is 401', async () => {
      expect((await fixture.getSummary(undefined, 'not-a-uuid')).status).toBe(401);
    });
  });

  describe('GET /api/v2/senderlist', () => {
    it("returns the account's senders as [{name, type}]", async () => {
      const account = await fixture.createAccount({ senders: [{ name: 'Zeta', type: 1 }, { name: 'Alpha', type: 0 }, { name: '353861234567', type: 2 }] });
      const res = await fetchChecked(`${fixture.baseUrl}/api/v2/senderlist`, { headers: { authorization: `Bearer ${account.token}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual([
        { name: '353861234567', type: 2 }, { name: 'Alpha', type: 0 }, { name: 'Zeta', type: 1 },
      ]);
    });

    it('returns an empty array for an account without senders', async () => {
      const account = await fixture.createAccount();
      const res = await fetchChecked(`${fixture.baseUrl}/api/v2/senderlist`, { headers: { authorization: `Bearer ${account.token}` } });
      expect(await res.json()).toEqual([]);
    });

    it('answers 401 with {success:false, message, errors[]} without a valid token', async () => {
      for (const headers of [{}, { authorization: 'Bearer wrong' }]) {
        const res = await fetchChecked(`${fixture.baseUrl}/api/v2/senderlist`, { headers });
        expect(res.status).toBe(401);
        const body = (await res.json()) as { success: boolean; message: string; errors: string[] };
        expect(body.success).toBe(false);
        expect(typeof body.message).toBe('string');
        expect(body.errors.length).toBeGreaterThan(0);
        expect(body.errors.every((e) => typeof e === 'string')).toBe(true);
      }
    });
  });

  describe('routing', () => {
    it('answers 404 problem+json for an unknown path', async () => {
      const res = await fetchChecked(`${fixture.baseUrl}/v2/nothing`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });

    it.each([
      ['GET', '/v1/campaign', 'POST'],
      ['DELETE', '/v1/campaign/0d7f0b3e-6f3c-4f9a-9d6e-2b1c3a4d5e6f', 'GET'],
      ['POST', '/health', 'GET'],
      ['PUT', '/api/v2/senderlist', 'GET'],
      ['GET', '/auth/token', 'POST'],
    ])('answers 405 with Allow for %s %s', async (method, path, allowed) => {
      const res = await fetchChecked(`${fixture.baseUrl}${path}`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toContain(allowed);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });
  });
});

describe('request body limit', () => {
  let fixture: ApiFixture;
  let admin: Account;
  const maxBodyBytes = 2_000;

  beforeAll(async () => {
    fixture = await startApiFixture({ maxBodyBytes });
    admin = await fixture.createAccount();
  });
  afterAll(async () => {
    await fixture.close();
  });

  function bodyOfBytes(bytes: number): string {
    const base = JSON.stringify(validBody({ campaignName: 'x' }));
    const padding = bytes - base.length;
    const body = JSON.stringify(validBody({ campaignName: 'x', pad: 'p'.repeat(padding - ',"pad":""'.length) }));
    expect(Buffer.byteLength(body)).toBe(bytes);
    return body;
  }

  it('accepts a body of exactly maxBodyBytes', async () => {
    expect((await fixture.postCampaign(admin.token, bodyOfBytes(maxBodyBytes))).status).toBe(202);
  });

  it('answers 413 problem+json for one byte more (Content-Length declared)', async () => {
    const res = await fixture.postCampaign(admin.token, bodyOfBytes(maxBodyBytes + 1));
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ status: 413 });
  });

  it('answers 413 for a streamed (chunked) body past the limit', async () => {
    const chunk = new TextEncoder().encode(' '.repeat(1_000));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 10) controller.close();
        else {
          sent++;
          controller.enqueue(chunk);
        }
      },
    });
    const res = await fetchChecked(`${fixture.baseUrl}/v1/campaign`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.token}` },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
  });
});
