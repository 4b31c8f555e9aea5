/**
 * No input yields a 500 and no single request stalls the gateway. Over a real server
 * and a real SQLite file: 125,000 invalid recipients are a 400 listing the first 20 errors with the
 * total; past api.maxBufferedBytes across requests in flight a request gets 503 with Retry-After;
 * /health answers while a large body is parsed, validated and stored.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startApiFixture, type ApiFixture } from '../support/api-fixture.js';
import { fetchChecked } from '../support/openapi-check.js';

let fixture: ApiFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const base = { text: 'Hello', from: 'Acme' };

describe('a request with 125,000 invalid recipients', () => {
  it('is a 400 problem+json listing the first 20 errors and how many there are in all', async () => {
    fixture = await startApiFixture({ startProcessor: false });
    const { token } = await fixture.createAccount();
    const recipientInfo = Array.from({ length: 125_000 }, (_, i) => ({ msisdn: `not-a-number-${i}` }));
    const response = await fixture.postCampaign(token, { ...base, recipientInfo });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await response.json()) as { title: string; status: number; detail: string };
    expect(problem.title).toBe('Validation Error');
    expect(problem.status).toBe(400);
    const listed = problem.detail.split('; ');
    for (let i = 0; i < 20; i++) expect(listed[i]).toBe(`recipientInfo[${i}].msisdn must contain only digits with an optional leading '+'`);
    expect(problem.detail).not.toContain('recipientInfo[20]');
    expect(listed[20]).toBe('and 124980 more errors (125000 in all)');
    expect(fixture.store.db.prepare('SELECT COUNT(*) AS n FROM campaigns').get()).toEqual({ n: 0 });
  });
});

describe('recipients read a run at a time', () => {
  it('a JSON error inside one recipient is still a 400 naming invalid JSON, and nothing is stored', async () => {
    fixture = await startApiFixture({ startProcessor: false });
    const { token } = await fixture.createAccount();
    const many = Array.from({ length: 10_000 }, (_, i) => `{"msisdn":"${353_860_000_000 + i}"}`);
    many[7_000] = '{"msisdn":tru}';
    const response = await fixture.postCampaign(token, `{"text":"Hi","from":"Acme","RecipientInfo":[${many.join(',')}]}`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { detail: string }).detail).toMatch(/^the request body is not valid JSON/);
    expect(fixture.store.db.prepare('SELECT COUNT(*) AS n FROM campaigns').get()).toEqual({ n: 0 });
  });
});

describe('the bound on bytes buffered across requests (api.maxBufferedBytes)', () => {
  it('answers 503 problem+json with Retry-After past it, and serves again once the bytes are released', async () => {
    // One client may hold the whole total here: this is the total's bound, not a client's share
    // (that one is slow-bodies.test.ts's).
    fixture = await startApiFixture({ startProcessor: false, maxBodyBytes: 1_000_000, maxBufferedBytes: 1_000_000, bodyLimits: { maxBufferedBytesPerClient: 1_000_000 } });
    const { token } = await fixture.createAccount();
    const { port } = new URL(fixture.baseUrl);
    const body = Buffer.from(JSON.stringify({ ...base, recipientInfo: [{ msisdn: '353861234567' }], padding: 'x'.repeat(700_000) }));
    // A request that has declared 700 kB and sent half of it holds its reservation while it is open.
    const holder = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => holder.once('connect', () => resolve()));
    let holderResponse = '';
    holder.on('data', (chunk: Buffer) => {
      holderResponse += chunk.toString('utf8');
    });
    holder.write(
      `POST /v1/campaign HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    holder.write(body.subarray(0, 350_000));
    try {
      // Until the holder's headers are read, a second request may still fit: poll until one is refused.
      let refused: Response | undefined;
      const deadline = Date.now() + 10_000;
      while (refused === undefined && Date.now() < deadline) {
        const second = await fixture.postCampaign(token, { ...base, recipientInfo: [{ msisdn: '353861234567' }], padding: 'y'.repeat(400_000) });
        if (second.status === 503) refused = second;
        else expect(second.status).toBe(202);
      }
      expect(refused).toBeDefined();
      expect(refused!.headers.get('retry-after')).toBe('1');
      expect(refused!.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await refused!.json()).toEqual({ title: 'Service Unavailable', status: 503, detail: expect.stringContaining('api.maxBufferedBytes') });
      // A small request still fits beside the holder.
      expect((await fixture.postCampaign(token, { ...base, recipientInfo: [{ msisdn: '353861234567' }] })).status).toBe(202);
      holder.write(body.subarray(350_000));
      const finishBy = Date.now() + 10_000;
      while (!holderResponse.includes('\r\n\r\n') && Date.now() < finishBy) await new Promise((resolve) => setImmediate(resolve));
      expect(holderResponse).toMatch(/^HTTP\/1\.1 202 /);
      // Released: the same large request now fits.
      expect((await fixture.postCampaign(token, { ...base, recipientInfo: [{ msisdn: '353861234567' }], padding: 'y'.repeat(400_000) })).status).toBe(202);
    } finally {
      holder.destroy();
    }
  });
});

describe('a large body does not stall the gateway', () => {
  it('/health answers while a 20 MB campaign request is parsed, validated and stored', async () => {
    fixture = await startApiFixture({ startProcessor: false });
    const { token } = await fixture.createAccount();
    const recipientInfo = Array.from({ length: 500_000 }, (_, i) => ({ msisdn: String(353_860_000_000 + i), ClientReference: `r${i}` }));
    const body = Buffer.from(JSON.stringify({ ...base, recipientInfo }));
    expect(body.length).toBeGreaterThan(20_000_000);
    const { port } = new URL(fixture.baseUrl);
    const events: string[] = [];
    const posted = new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: Number(port), path: '/v1/campaign', method: 'POST', headers: {
        authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': body.length,
      } }, (res) => {
        res.resume();
        res.on('end', () => {
          events.push('campaign answered');
          resolve(res.statusCode ?? 0);
        });
      });
      req.on('error', reject);
      // Once every byte is handed to the socket, the server has the body or is reading its last part.
      req.end(body, () => {
        void fetchChecked(`${fixture!.baseUrl}/health`).then(async (health) => {
          events.push(`health ${health.status} ${await health.text()}`);
        });
      });
    });
    expect(await posted).toBe(202);
    expect(events[0]).toBe('health 200 Healthy');
    const stored = fixture.store.db.prepare('SELECT COUNT(*) AS n FROM campaigns').get();
    expect(stored).toEqual({ n: 1 });
  });
});
