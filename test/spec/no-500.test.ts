/**
 * "No input ever yields a 500": odd inputs at every field and every layer of
 * every endpoint of a real `smsgate serve` — wrong JSON types, huge numbers, deep nesting, unicode,
 * NUL, invalid UTF-8, duplicate keys, non-object bodies, odd content types, HEAD/OPTIONS, very long
 * URLs, Authorization header variants, malformed HTTP. Every answer must be a deliberate status
 * below 500 without a stack trace, the server must log no error, and it must stay healthy.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, SpecServer, type SpecAccount } from './spec-server.js';

let server: SpecServer;
let acme: SpecAccount;

beforeAll(async () => {
  server = await SpecServer.start();
  acme = await server.createAccount('acme', { senders: [{ name: 'Acme', type: 0 }] });
}, 180_000);
afterAll(async () => server?.stop());

const VALID: Record<string, unknown> = { text: 'Hello', from: 'Acme', recipientInfo: [{ msisdn: '447700900123', ClientReference: 'r' }] };

/** Values of every JSON type and a few edge cases, tried at every field. */
const ODD_VALUES: readonly unknown[] = [
  null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, '', ' ', '\u0000', '\uFEFF', '\u202E', '😀'.repeat(3),
  '\ud800', 'a'.repeat(10_000), [], [null], [[[]]], {}, { a: { b: { c: [] } } }, 'true', '2026-06-01T10:15',
];

function deepArray(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

interface Answer {
  status: number;
  contentType: string | null;
  text: string;
}

async function send(path: string, init: RequestInit): Promise<Answer> {
  const res = await fetch(server.url(path), init);
  return { status: res.status, contentType: res.headers.get('content-type'), text: init.method === 'HEAD' ? '' : await res.text() };
}

function expectDeliberate(answer: Answer, what: string): void {
  expect(answer.status, `${what}: ${answer.text.slice(0, 200)}`).toBeLessThan(500);
  expect(answer.text, what).not.toMatch(/\bat .+\.(?:js|ts):\d+/);
  expect(answer.text, what).not.toMatch(/Internal Server Error/i);
}

function postCampaign(body: string | Uint8Array, headers: Record<string, string> = {}): Promise<Answer> {
  return send('/v1/campaign', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${acme.token}`, ...headers },
    body,
  });
}

describe('POST /v1/campaign never answers 5xx', () => {
  it('for an odd value at every top-level field', async () => {
    for (const field of ['text', 'from', 'recipientInfo', 'campaignName', 'sendAt', 'createAsDraft', 'shouldSaveList', 'Text', 'unknownField']) {
      for (const value of ODD_VALUES) {
        const answer = await postCampaign(JSON.stringify({ ...VALID, [field]: value }));
        expectDeliberate(answer, `${field} = ${JSON.stringify(value).slice(0, 40)}`);
        expect([202, 400]).toContain(answer.status);
      }
    }
  });

  it('for an odd value at every recipient field and as a recipient', async () => {
    for (const value of ODD_VALUES) {
      for (const recipient of [{ msisdn: value }, { msisdn: '447700900123', ClientReference: value }, value]) {
        const answer = await postCampaign(JSON.stringify({ ...VALID, recipientInfo: [recipient] }));
        expectDeliberate(answer, `recipient ${JSON.stringify(recipient).slice(0, 40)}`);
        expect([202, 400]).toContain(answer.status);
      }
    }
  });

  it('for bodies that are not a JSON object', async () => {
    const bodies = ['[]', '"text"', '5', 'null', 'true', '1e999', '-', '{', '}', '{"text":}', "{'text':'a'}", '\uFEFF{}',
      '{"text":"a","text":5}', '{"__proto__":{"text":"a"},"from":"x","recipientInfo":[]}', '{"constructor":{"prototype":{}}}',
      deepArray(100_000), `{"text":${deepArray(50_000)}}`, JSON.stringify(VALID).repeat(2), ' '.repeat(1000)];
    for (const body of bodies) {
      const answer = await postCampaign(body);
      expectDeliberate(answer, `body ${body.slice(0, 40)}`);
      expect(answer.status).toBe(400);
    }
  });

  it('for NUL bytes, invalid UTF-8, lone surrogates and a UTF-16 body', async () => {
    const json = JSON.stringify(VALID);
    const bodies: Uint8Array[] = [
      Buffer.from(json.replace('Hello', 'He\u0000llo')),
      Buffer.concat([Buffer.from('{"text":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('","from":"Acme","recipientInfo":[{"msisdn":"1"}]}')]),
      Buffer.from(json.replace('Hello', '\\ud800\\udfff\\udc00')),
      Buffer.from(json, 'utf16le'),
      Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from(json)]),
    ];
    for (const body of bodies) {
      const answer = await postCampaign(body);
      expectDeliberate(answer, `bytes ${Buffer.from(body).toString('hex').slice(0, 40)}`);
      expect([202, 400]).toContain(answer.status);
    }
  });

  it('for missing and odd content types', async () => {
    const json = JSON.stringify(VALID);
    for (const contentType of ['', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16',
      'application/json;;;', 'APPLICATION/JSON', 'application/vnd.api+json', '*/*', 'application/json\u00e9']) {
      const headers: Record<string, string> = contentType === '' ? {} : { 'content-type': contentType };
      const answer = await send('/v1/campaign', { method: 'POST', headers: { authorization: `Bearer ${acme.token}`, ...headers }, body: json });
      expectDeliberate(answer, `content-type ${contentType}`);
    }
  });
});

describe('Authorization header variants never answer 5xx', () => {
  const variants = ['Bearer', 'Bearer ', 'bearer x', 'BEARER x', 'Basic dXNlcjpwYXNz', 'Bearer  x', 'Bearer x y', 'Bearer \u00e9', 'Bearer a.b.c',
    'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.', 'Bearer eyJ.eyJ.eyJ', `Bearer ${'a'.repeat(8_000)}`, 'Bearer smsgate_pat_', 'Bearer smsgate_pat_!!!',
    'Token abc', ',', 'Bearer x, Bearer y'];
  const endpoints: Array<[string, string]> = [['POST', '/v1/campaign'], ['GET', '/v1/campaign/2d1f3c5e-8a7b-4c6d-9e0f-112233445566'], ['GET', '/api/v2/senderlist']];
  for (const [method, path] of endpoints) {
    it(`on ${method} ${path}: every variant is 401`, async () => {
      for (const authorization of variants) {
        const answer = await send(path, {
          method,
          headers: { authorization: authorization.replace(/[^\x20-\xff]/g, '?'), 'content-type': 'application/json' },
          ...(method === 'POST' ? { body: JSON.stringify(VALID) } : {}),
        });
        expectDeliberate(answer, `${method} ${path} Authorization ${authorization.slice(0, 30)}`);
        expect(answer.status, authorization.slice(0, 30)).toBe(401);
      }
    });
  }

  it('crafted and tampered JWTs are 401 on every endpoint', async () => {
    const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
    const issued = await fetch(server.url('/auth/token'), {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'messaging-api', grant_type: 'password', username: acme.username, password: ADMIN_PASSWORD }).toString(),
    });
    const real = ((await issued.json()) as { access_token: string }).access_token;
    const [header, payload, signature] = real.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const tokens = [
      `${header}.${b64({ ...claims, sub: '999999' })}.${signature}`,
      `${header}.${payload}.${b64('not the signature')}`,
      `${b64({ alg: 'none' })}.${payload}.`,
      `${b64({ alg: 'HS256', kid: JSON.parse(Buffer.from(header, 'base64url').toString('utf8')).kid })}.${payload}.${b64('x'.repeat(32))}`,
      `${b64({ alg: 'ES256', kid: 'unknown-key' })}.${payload}.${signature}`,
      `${b64({ alg: 'ES256', kid: {} })}.${b64({})}.${b64('x')}`,
      `${b64({ alg: 'ES256', crit: ['x'] })}.${payload}.${signature}`,
      `${b64('not json')}.${b64('not json')}.${b64('x')}`,
      `${b64([])}.${b64(null)}.${b64('x')}`,
    ];
    for (const token of tokens) {
      for (const [method, path] of [['POST', '/v1/campaign'], ['GET', '/v1/campaign/2d1f3c5e-8a7b-4c6d-9e0f-112233445566'], ['GET', '/api/v2/senderlist']] as const) {
        const answer = await send(path, {
          method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          ...(method === 'POST' ? { body: JSON.stringify(VALID) } : {}),
        });
        expect(answer.status, `${method} ${path} ${token.slice(0, 40)}`).toBe(401);
      }
    }
    // The untouched token works, so the 401s above are the tampering's doing.
    expect((await send('/api/v2/senderlist', { headers: { authorization: `Bearer ${real}` } })).status).toBe(200);
  });

  it('accepts the scheme in any case and more than one space before the token (RFC 9110 §11.1)', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer ']) {
      const answer = await send('/api/v2/senderlist', { headers: { authorization: `${scheme} ${acme.token}` } });
      expect(answer.status).toBe(200);
    }
  });
});

describe('Every route and method never answers 5xx', () => {
  const paths = ['/health', '/v1/campaign', '/v1/campaign/2d1f3c5e-8a7b-4c6d-9e0f-112233445566', '/v1/campaign/not-a-uuid', '/v1/campaign/%ZZ',
    '/v1/campaign/%00', '/v1/campaign/%E0%A4%A', '/api/v2/senderlist', '/auth/token', '/legacy/auth/token', '/', '/nope', '/v1', '//v1//campaign',
    '/V1/CAMPAIGN', '/health?x=%ZZ', `/v1/campaign/${'a'.repeat(8_000)}`];
  for (const method of ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE']) {
    it(`${method} on every path`, async () => {
      for (const path of paths) {
        const answer = await send(path, { method, headers: { authorization: `Bearer ${acme.token}` } });
        expectDeliberate(answer, `${method} ${path.slice(0, 60)}`);
      }
    });
  }

  it('a URL longer than the HTTP parser takes is refused with a 4xx', async () => {
    const answer = await send(`/v1/campaign/${'a'.repeat(100_000)}`, { headers: { authorization: `Bearer ${acme.token}` } });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
  });

  it('malformed HTTP on a raw socket is refused with a 4xx, not a 5xx', async () => {
    const { port, hostname } = new URL(server.baseUrl);
    for (const request of ['GARBAGE\r\n\r\n', 'GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      'POST /v1/campaign HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n', 'GET /\u00ff HTTP/1.1\r\n\r\n']) {
      const response = await new Promise<string>((resolve) => {
        const socket = connect(Number(port), hostname, () => socket.end(Buffer.from(request, 'latin1')));
        let data = '';
        socket.on('data', (chunk: Buffer) => { data += chunk.toString('latin1'); });
        socket.on('close', () => resolve(data));
        socket.on('error', () => resolve(data));
      });
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? '400');
      expect(status, request).toBeGreaterThanOrEqual(400);
      expect(status, request).toBeLessThan(500);
    }
  });
});

describe('The token endpoints never answer 5xx', () => {
  it('for odd forms, repeated fields, odd encodings and content types', async () => {
    const bodies: Array<[string, string]> = [
      ['application/x-www-form-urlencoded', ''],
      ['application/x-www-form-urlencoded', 'client_id=%ZZ&grant_type=%E0%A4%A'],
      ['application/x-www-form-urlencoded', 'client_id=messaging-api&client_id=messaging-api&grant_type=password&username=a&password=b'],
      ['application/x-www-form-urlencoded', `client_id=messaging-api&grant_type=password&username=${'u'.repeat(10_000)}&password=p`],
      ['application/x-www-form-urlencoded', 'client_id=messaging-api&grant_type=password&username=%00&password=%00'],
      ['application/x-www-form-urlencoded', 'client_id=messaging-api&grant_type=refresh_token&refresh_token=%FF%FE'],
      ['application/x-www-form-urlencoded', '&&&==&=&'],
      ['application/x-www-form-urlencoded', 'x'.repeat(20_000)],
      ['application/json', '{"client_id":"messaging-api","grant_type":"password","username":"a","password":"b"}'],
      ['text/plain', 'client_id=messaging-api'],
      ['', 'client_id=messaging-api'],
    ];
    for (const path of ['/auth/token', '/legacy/auth/token']) {
      for (const [contentType, body] of bodies) {
        const answer = await send(path, { method: 'POST', headers: contentType === '' ? {} : { 'content-type': contentType }, body });
        expectDeliberate(answer, `${path} ${contentType} ${body.slice(0, 40)}`);
      }
    }
  });
});

describe('After all of the above', () => {
  it('the server is healthy and logged no unexpected error', async () => {
    const health = await send('/health', {});
    expect(health.status).toBe(200);
    expect(server.errorLines).toEqual([]);
  });
});
