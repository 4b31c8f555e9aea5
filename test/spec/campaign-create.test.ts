/**
 * SPEC.md "GET {base_url}/health", "POST {base_url}/v1/campaign", "Create Campaign Request",
 * "Recipient", "Scheduling (sendAt)" rules 2, 4, 6, "Limits" and "Errors", checked line by line
 * against a real `smsgate serve` process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, SPEC_MAX_BODY_BYTES, SpecServer, UUID_PATTERN, type SpecAccount } from './spec-server.js';

let server: SpecServer;
let admin: SpecAccount;
let plainUser: SpecAccount;

beforeAll(async () => {
  server = await SpecServer.start();
  admin = await server.createAccount('acme');
  plainUser = await server.createAccount('plain', { admin: false });
}, 180_000);
afterAll(async () => server?.stop());

const VALID = { text: 'Hello', from: 'Acme', recipientInfo: [{ msisdn: '447700900123' }] } as const;

function post(body: unknown, token: string | undefined = admin.token, headers: Record<string, string> = {}): Promise<Response> {
  return postJson(server.url('/v1/campaign'), token, body, headers);
}

async function expectAccepted(body: unknown): Promise<void> {
  const res = await post(body);
  expect(res.status, await res.clone().text()).toBe(202);
}

/** SPEC Errors: 400 problem+json, title `Validation Error`, status 400, detail naming the field. */
async function expectValidationError(body: unknown, detailMentions: string | RegExp): Promise<void> {
  const res = await post(body);
  expect(res.status).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem = (await res.json()) as Record<string, unknown>;
  expect(problem['title']).toBe('Validation Error');
  expect(problem['status']).toBe(400);
  expect(typeof problem['detail']).toBe('string');
  expect(problem['detail']).toMatch(detailMentions);
}

function withRecipient(recipient: unknown): Record<string, unknown> {
  return { ...VALID, recipientInfo: [recipient] };
}

describe('GET /health', () => {
  it('answers 200 text/plain `Healthy` without a bearer token', async () => {
    const res = await fetch(server.url('/health'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe('Healthy');
  });
});

describe('POST /v1/campaign 202', () => {
  it('answers 202 application/json with exactly {id (uuid), message "Campaign received to be processed"}', async () => {
    const res = await post(VALID);
    expect(res.status).toBe(202);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['id', 'message']);
    expect(body['id']).toMatch(UUID_PATTERN);
    expect(body['message']).toBe('Campaign received to be processed');
  });

  it('gives every accepted campaign its own id', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) ids.add(((await (await post(VALID)).json()) as { id: string }).id);
    expect(ids.size).toBe(3);
  });

  it('accepts every optional field at once (campaignName, sendAt, createAsDraft, shouldSaveList, ClientReference)', async () => {
    await expectAccepted({
      ...VALID, campaignName: 'Spring sale', sendAt: '2026-05-01T09:30', createAsDraft: false, shouldSaveList: false,
      recipientInfo: [{ msisdn: '+353871234567', ClientReference: 'ref-1' }, { msisdn: '447700900124', ClientReference: null }],
    });
  });
});

describe('POST /v1/campaign 401', () => {
  const cases: Array<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['an unknown personal access token', { authorization: 'Bearer smsgate_pat_0000000000000000000000000000000000000000000' }],
    ['a token that is neither a PAT nor a JWT', { authorization: 'Bearer not-a-token' }],
    ['a JWT not signed by the service', { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' }],
    ['`Bearer` with no token', { authorization: 'Bearer' }],
    ['the Basic scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
  ];
  for (const [name, headers] of cases) {
    it(`answers 401 with no body and WWW-Authenticate: Bearer for ${name}`, async () => {
      const res = await fetch(server.url('/v1/campaign'), {
        method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(VALID),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await res.text()).toBe('');
    });
  }

  it('keeps the PAT prefix case-sensitive: an upper-cased prefix is 401', async () => {
    const upper = admin.token.replace(/^smsgate_pat_/, 'SMSGATE_pat_');
    const res = await post(VALID, upper);
    expect(res.status).toBe(401);
  });

  it('answers 401 for a revoked personal access token', async () => {
    const token = await server.createToken(admin.username);
    expect((await post(VALID, token)).status).toBe(202);
    await server.cli('token', 'revoke', '--token', token);
    const res = await post(VALID, token);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });
});

describe('POST /v1/campaign 403', () => {
  it('answers 403 problem+json Forbidden with the fixed detail for a user who is not a client administrator', async () => {
    const res = await post(VALID, plainUser.token);
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({
      title: 'Forbidden', status: 403, detail: 'Authenticated user is not a recognized client administrator',
    });
  });
});

describe('POST /v1/campaign 400: the body', () => {
  it('is a Validation Error when the body is not JSON', async () => {
    await expectValidationError('{"text": "unterminated', /JSON/);
  });

  it('is a Validation Error when the body is empty', async () => {
    await expectValidationError('', /empty/);
  });

  it('is a Validation Error when the JSON is an array or a string, not an object', async () => {
    await expectValidationError([VALID], /object/);
    await expectValidationError('"text"', /object/);
  });

  it('is 413 problem+json past api.maxBodyBytes, read by a client that is still sending the body', async () => {
    // Several times over: closing the connection early made some of these fail with EPIPE instead.
    for (let i = 0; i < 8; i++) {
      const res = await post({ ...VALID, text: 'a'.repeat(SPEC_MAX_BODY_BYTES) });
      expect(res.status).toBe(413);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await res.json()).toMatchObject({ status: 413, title: expect.any(String), detail: expect.any(String) });
    }
  });

  it('is a Validation Error when the content type is not JSON', async () => {
    const res = await post(JSON.stringify(VALID), admin.token, { 'content-type': 'text/plain' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ title: 'Validation Error', status: 400 });
  });
});

describe('Create Campaign Request: text (1 to 2000 characters, a non-whitespace one)', () => {
  it('accepts 1 and 2000 characters', async () => {
    await expectAccepted({ ...VALID, text: 'a' });
    await expectAccepted({ ...VALID, text: 'a'.repeat(2000) });
  });
  it('rejects 2001 characters, naming text', async () => expectValidationError({ ...VALID, text: 'a'.repeat(2001) }, /text/));
  it('rejects an empty text', async () => expectValidationError({ ...VALID, text: '' }, /text/));
  it('rejects a whitespace-only text', async () => expectValidationError({ ...VALID, text: ' \t\n ' }, /text/));
  it('is required: missing or null is `text is required`', async () => {
    const { text: _text, ...rest } = VALID;
    await expectValidationError(rest, /text is required/);
    await expectValidationError({ ...VALID, text: null }, /text is required/);
  });
  it('must be a string: 5 is rejected', async () => expectValidationError({ ...VALID, text: 5 }, /text/));
});

describe('Create Campaign Request: from', () => {
  it('is required: missing is `from is required`', async () => {
    const { from: _from, ...rest } = VALID;
    await expectValidationError(rest, /from is required/);
  });
  it('rejects an empty or whitespace-only sender id', async () => {
    await expectValidationError({ ...VALID, from: '' }, /from/);
    await expectValidationError({ ...VALID, from: '   ' }, /from/);
  });
  it('accepts 11 characters that are not digits-only, and rejects 12', async () => {
    await expectAccepted({ ...VALID, from: 'Abcdefghijk' });
    await expectValidationError({ ...VALID, from: 'Abcdefghijkl' }, /from/);
  });
  it('is not restricted to letters and digits', async () => {
    await expectAccepted({ ...VALID, from: 'A&B-C.D!' });
  });
  it('removes leading and trailing spaces before counting: 11 characters inside spaces are accepted', async () => {
    await expectAccepted({ ...VALID, from: '  Abcdefghijk  ' });
  });
  it('accepts 20 digits and rejects 21 digits', async () => {
    await expectAccepted({ ...VALID, from: '1'.repeat(20) });
    await expectValidationError({ ...VALID, from: '1'.repeat(21) }, /from/);
  });
  it('reserves 50000 through 59999: 49999 and 60000 are accepted, 50000, 55555 and 59999 rejected', async () => {
    await expectAccepted({ ...VALID, from: '49999' });
    await expectAccepted({ ...VALID, from: '60000' });
    for (const reserved of ['50000', '55555', '59999', ' 50000 ']) await expectValidationError({ ...VALID, from: reserved }, /from/);
  });
  it('must be a string', async () => expectValidationError({ ...VALID, from: 12345 }, /from/));
});

describe('Create Campaign Request: recipientInfo (at least 1 item, no maximum)', () => {
  it('is required', async () => {
    const { recipientInfo: _r, ...rest } = VALID;
    await expectValidationError(rest, /recipientInfo is required/);
  });
  it('rejects an empty array', async () => expectValidationError({ ...VALID, recipientInfo: [] }, /recipientInfo/));
  it('must be an array of objects', async () => {
    await expectValidationError({ ...VALID, recipientInfo: { msisdn: '447700900123' } }, /recipientInfo/);
    await expectValidationError({ ...VALID, recipientInfo: ['447700900123'] }, /recipientInfo\[0\]/);
  });
  it('accepts 10,000 recipients in one request', async () => {
    const recipientInfo = Array.from({ length: 10_000 }, (_, i) => ({ msisdn: `4477${String(i).padStart(8, '0')}` }));
    await expectAccepted({ ...VALID, recipientInfo });
  });
});

describe('Recipient: msisdn (1 to 20 characters, digits with an optional leading +)', () => {
  it('a missing msisdn is a detail naming the field as required', async () => {
    const res = await post({ ...VALID, recipientInfo: [{ msisdn: '447700900123' }, { ClientReference: 'x' }] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toContain('recipientInfo[1].msisdn is required');
  });
  it('accepts 20 digits and rejects 21', async () => {
    await expectAccepted(withRecipient({ msisdn: '1'.repeat(20) }));
    await expectValidationError(withRecipient({ msisdn: '1'.repeat(21) }), /recipientInfo\[0\]\.msisdn/);
  });
  it('accepts a leading + and every supported Irish and UK format', async () => {
    for (const msisdn of ['+353871234567', '0871234567', '353871234567', '00353871234567', '07700900123', '447700900123', '+447700900123']) {
      await expectAccepted(withRecipient({ msisdn }));
    }
  });
  it('rejects spaces, brackets, hyphens and a + that is not leading', async () => {
    for (const msisdn of ['087 1234567', '(087)1234567', '087-1234567', '0871+234567', '']) {
      await expectValidationError(withRecipient({ msisdn }), /recipientInfo\[0\]\.msisdn/);
    }
  });
  it('must be a string', async () => expectValidationError(withRecipient({ msisdn: 447700900123 }), /recipientInfo\[0\]\.msisdn/));
});

describe('Recipient: ClientReference (up to 30 characters, string or null)', () => {
  it('accepts 30 characters, null and omission', async () => {
    await expectAccepted(withRecipient({ msisdn: '447700900123', ClientReference: 'r'.repeat(30) }));
    await expectAccepted(withRecipient({ msisdn: '447700900123', ClientReference: null }));
    await expectAccepted(withRecipient({ msisdn: '447700900123' }));
  });
  it('rejects 31 characters', async () => {
    await expectValidationError(withRecipient({ msisdn: '447700900123', ClientReference: 'r'.repeat(31) }), /ClientReference/);
  });
  it('must be a string or null', async () => {
    await expectValidationError(withRecipient({ msisdn: '447700900123', ClientReference: 7 }), /ClientReference/);
  });
});

describe('Create Campaign Request: campaignName (1 to 30 characters, a non-whitespace one)', () => {
  it('accepts 1 and 30 characters, and omission (default API Broadcast)', async () => {
    await expectAccepted({ ...VALID, campaignName: 'a' });
    await expectAccepted({ ...VALID, campaignName: 'n'.repeat(30) });
    await expectAccepted(VALID);
  });
  it('rejects 31 characters', async () => expectValidationError({ ...VALID, campaignName: 'n'.repeat(31) }, /campaignName/));
  it('rejects null, empty and spaces-only values', async () => {
    await expectValidationError({ ...VALID, campaignName: null }, /campaignName/);
    await expectValidationError({ ...VALID, campaignName: '' }, /campaignName/);
    await expectValidationError({ ...VALID, campaignName: '   ' }, /campaignName/);
  });
});

describe('Create Campaign Request: sendAt (Scheduling rules 2, 4, 6, 7)', () => {
  it('accepts the four forms yyyy-MM-ddTHH:mm, yyyy-MM-ddTHH:mm:ss, yyyy-MM-dd HH:mm, yyyy-MM-dd HH:mm:ss', async () => {
    for (const sendAt of ['2026-06-01T10:15', '2026-06-01T10:15:30', '2026-06-01 10:15', '2026-06-01 10:15:30']) {
      await expectAccepted({ ...VALID, sendAt });
    }
  });
  it('accepts null (send immediately)', async () => expectAccepted({ ...VALID, sendAt: null }));
  it('accepts past dates and has no maximum horizon', async () => {
    await expectAccepted({ ...VALID, sendAt: '2001-01-01T00:00' });
    await expectAccepted({ ...VALID, sendAt: '9999-12-31T23:59' });
  });
  it('rejects a Z, any other zone designator and a numeric offset', async () => {
    for (const sendAt of ['2026-06-01T10:15Z', '2026-06-01T10:15:00Z', '2026-06-01T10:15+01:00', '2026-06-01T10:15:00-0500', '2026-06-01T10:15 IST']) {
      await expectValidationError({ ...VALID, sendAt }, /sendAt/);
    }
  });
  it('rejects empty and whitespace-only strings', async () => {
    await expectValidationError({ ...VALID, sendAt: '' }, /sendAt/);
    await expectValidationError({ ...VALID, sendAt: '   ' }, /sendAt/);
  });
  it('rejects values off the pattern and dates or times that do not exist', async () => {
    for (const sendAt of ['2026-06-01', '2026-6-1T10:15', '2026-06-01T10', '2026-06-01T10:15:30.000', '01/06/2026 10:15', '2026-02-30T10:00', '2026-13-01T10:00', '2026-06-01T24:00', '2026-06-01T10:60']) {
      await expectValidationError({ ...VALID, sendAt }, /sendAt/);
    }
  });
  it('must be a string or null', async () => expectValidationError({ ...VALID, sendAt: 1_780_000_000 }, /sendAt/));
});

describe('Create Campaign Request: createAsDraft and shouldSaveList (booleans)', () => {
  it('accept true and false', async () => {
    for (const value of [true, false]) {
      await expectAccepted({ ...VALID, createAsDraft: value });
      await expectAccepted({ ...VALID, shouldSaveList: value });
    }
  });
  it('reject the string "true" and numbers', async () => {
    await expectValidationError({ ...VALID, createAsDraft: 'true' }, /createAsDraft/);
    await expectValidationError({ ...VALID, shouldSaveList: 1 }, /shouldSaveList/);
  });
});

describe('POST /v1/campaign 400 detail', () => {
  it('names every failing field', async () => {
    const res = await post({ text: '', from: '50000', recipientInfo: [{ msisdn: 'abc' }] });
    const { detail } = (await res.json()) as { detail: string };
    expect(detail).toMatch(/text/);
    expect(detail).toMatch(/from/);
    expect(detail).toMatch(/recipientInfo\[0\]\.msisdn/);
  });
});
