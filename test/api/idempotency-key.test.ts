/**
 * POST /v1/campaign with an Idempotency-Key (IETF httpapi draft "The Idempotency-Key HTTP Header
 * Field") over real HTTP against the API on a real SQLite file: a retry after a killed connection
 * gets the first campaign's id and creates and reserves nothing more; another body under the key is
 * 422; a request still in flight under it is 409; a failed request frees its key; keys are per
 * client, validated, and survive a restart of the gateway over the same file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteCreditLedger } from '../../src/store/sqlite/credit-ledger.js';
import type { StorePorts } from '../../src/store/store-ports.js';
import { startApiFixture, type Account, type ApiFixture } from '../support/api-fixture.js';
import { fetchChecked } from '../support/openapi-check.js';

function body(msisdn = '353871234567', text = 'Hello'): Record<string, unknown> {
  return { text, from: 'Acme', recipientInfo: [{ msisdn }] };
}

function post(fixture: ApiFixture, token: string, payload: unknown, key?: string): Promise<Response> {
  return fetchChecked(`${fixture.baseUrl}/v1/campaign`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
}

function topUp(fixture: ApiFixture, clientId: number, credits: number): void {
  const ledger = new SqliteCreditLedger(fixture.store.db);
  fixture.store.db.transaction(() => ledger.apply([{ clientId, kind: 'top-up', credits, campaignId: null, note: null }], Date.now())).immediate();
}

function campaignIds(fixture: ApiFixture, clientId: number): string[] {
  return (fixture.store.db.prepare('SELECT id FROM campaigns WHERE client_id = ? ORDER BY created_at').all(clientId) as Array<{ id: string }>).map((r) => r.id);
}

function reserveRows(fixture: ApiFixture, clientId: number): number {
  return (fixture.store.db.prepare(`SELECT COUNT(*) AS n FROM credit_ledger WHERE client_id = ? AND kind = 'reserve'`).get(clientId) as { n: number }).n;
}

async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Sends the whole request on a raw socket and destroys it at once: the client never reads the answer. */
function postAndHangUp(fixture: ApiFixture, token: string, payload: unknown, key: string): Promise<void> {
  const { port } = new URL(fixture.baseUrl);
  const json = JSON.stringify(payload);
  const request = [
    'POST /v1/campaign HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Content-Type: application/json', `Authorization: Bearer ${token}`,
    `Idempotency-Key: ${key}`, `Content-Length: ${Buffer.byteLength(json)}`, '', json,
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(request, (err) => {
        socket.destroy();
        if (err) reject(err);
        else resolve();
      });
    });
    socket.on('error', reject);
  });
}

describe('Idempotency-Key on POST /v1/campaign', () => {
  let fixture: ApiFixture;
  let client: Account;

  beforeAll(async () => {
    fixture = await startApiFixture();
    client = await fixture.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
    topUp(fixture, client.clientId, 100);
  });
  afterAll(async () => {
    await fixture.close();
  });

  it('answers a retry after a killed connection with the first 202 and id: one campaign, one reservation', async () => {
    const payload = body('353871000001');
    await postAndHangUp(fixture, client.token, payload, 'retry-after-hangup');
    // The request the client gave up on is still stored.
    const [stored] = await until(() => campaignIds(fixture, client.clientId), (ids) => ids.length === 1, 'the abandoned request stored');
    const retry = await until(() => post(fixture, client.token, payload, 'retry-after-hangup'), (res) => res.status !== 409, 'the first request answered');
    expect(retry.status).toBe(202);
    expect(await retry.json()).toEqual({ id: stored, message: 'Campaign received to be processed' });
    const again = await post(fixture, client.token, payload, 'retry-after-hangup');
    expect(((await again.json()) as { id: string }).id).toBe(stored);
    expect(campaignIds(fixture, client.clientId)).toEqual([stored]);
    expect(reserveRows(fixture, client.clientId)).toBe(1);
  });

  it('answers the same key with a different body 422 problem+json, storing nothing', async () => {
    const first = await post(fixture, client.token, body('353871000002'), 'reused-key');
    expect(first.status).toBe(202);
    const before = campaignIds(fixture, client.clientId).length;
    const other = await post(fixture, client.token, body('353871000003'), 'reused-key');
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await other.json()) as { title: string; detail: string };
    expect(problem.title).toBe('Unprocessable Content');
    expect(problem.detail).toContain('Idempotency-Key');
    // The same JSON with other bytes (whitespace) is another body too: the hash is of the raw bytes.
    const spaced = await post(fixture, client.token, JSON.stringify(body('353871000002'), null, 2), 'reused-key');
    expect(spaced.status).toBe(422);
    expect(campaignIds(fixture, client.clientId)).toHaveLength(before);
  });

  it('keeps keys per client: the same key from another client is its own request', async () => {
    const other = await fixture.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
    const mine = await post(fixture, client.token, body('353871000004'), 'shared-name');
    const theirs = await post(fixture, other.token, body('353871000005'), 'shared-name');
    expect(mine.status).toBe(202);
    expect(theirs.status).toBe(202);
    expect(((await mine.json()) as { id: string }).id).not.toBe(((await theirs.json()) as { id: string }).id);
  });

  it('frees the key of a request that failed, so a retry with the same key succeeds', async () => {
    const invalid = await post(fixture, client.token, { text: 'Hello', from: 'Acme', recipientInfo: [] }, 'after-400');
    expect(invalid.status).toBe(400);
    const valid = await post(fixture, client.token, body('353871000006'), 'after-400');
    expect(valid.status).toBe(202);

    const poor = await fixture.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
    topUp(fixture, poor.clientId, 1);
    const payload = body('353871000007', 'x'.repeat(200));
    const short = await post(fixture, poor.token, payload, 'after-credits');
    expect(short.status).toBe(400);
    expect(((await short.json()) as { detail: string }).detail).toBe('not enough credits: the campaign needs 2 credits and 1 are available');
    topUp(fixture, poor.clientId, 1);
    const paid = await post(fixture, poor.token, payload, 'after-credits');
    expect(paid.status).toBe(202);
    expect(campaignIds(fixture, poor.clientId)).toHaveLength(1);
  });

  it.each([
    ['longer than 255 characters', 'k'.repeat(256)],
    ['outside printable ASCII', 'cl\u00e9'],
    ['empty', ''],
  ])('refuses a key %s with 400 naming the header', async (_what, key) => {
    const before = campaignIds(fixture, client.clientId).length;
    const res = await post(fixture, client.token, body('353871000008'), key);
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { title: string; detail: string };
    expect(problem.title).toBe('Validation Error');
    expect(problem.detail).toContain('Idempotency-Key');
    expect(campaignIds(fixture, client.clientId)).toHaveLength(before);
  });

  it('refuses the header sent twice with 400 naming it', async () => {
    const { port } = new URL(fixture.baseUrl);
    const json = JSON.stringify(body('353871000013'));
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1', port: Number(port), path: '/v1/campaign', method: 'POST',
        // An array value is sent as two header lines.
        headers: { 'content-type': 'application/json', authorization: `Bearer ${client.token}`, 'idempotency-key': ['one', 'two'] },
      }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(json);
    });
    expect(answer.status).toBe(400);
    expect((JSON.parse(answer.text) as { detail: string }).detail).toContain('Idempotency-Key');
  });

  it('accepts a key of exactly 255 printable characters', async () => {
    const res = await post(fixture, client.token, body('353871000009'), `~ ${'k'.repeat(253)}`);
    expect(res.status).toBe(202);
  });
});

describe('Idempotency-Key while the first request is in flight', () => {
  let fixture: ApiFixture;
  let client: Account;
  let openGate: () => void = () => undefined;
  let gate: Promise<void> = Promise.resolve();

  /** The campaign insert waits at the gate while it is shut: the request stays in flight. */
  function gatedPorts(ports: StorePorts): StorePorts {
    const campaigns = new Proxy(ports.campaigns, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if (name !== 'insertCampaign' || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          await gate;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { ...ports, campaigns };
  }

  beforeAll(async () => {
    fixture = await startApiFixture({ wrapPorts: gatedPorts });
    client = await fixture.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
  });
  afterAll(async () => {
    openGate();
    await fixture.close();
  });

  it('answers 409 problem+json to the same key while the first request is unanswered, then replays its 202', async () => {
    gate = new Promise((resolve) => {
      openGate = resolve;
    });
    const payload = body('353871000010');
    const first = post(fixture, client.token, payload, 'in-flight');
    await until(() => fixture.store.db.prepare('SELECT state FROM idempotency_keys WHERE key = ?').get('in-flight') as { state: string } | undefined,
      (row) => row?.state === 'in_flight', 'the first request holding the key');
    const second = await post(fixture, client.token, payload, 'in-flight');
    expect(second.status).toBe(409);
    expect(second.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await second.json()) as { title: string }).title).toBe('Conflict');
    openGate();
    const answered = await first;
    expect(answered.status).toBe(202);
    const { id } = (await answered.json()) as { id: string };
    const third = await post(fixture, client.token, payload, 'in-flight');
    expect(third.status).toBe(202);
    expect(((await third.json()) as { id: string }).id).toBe(id);
    expect(campaignIds(fixture, client.clientId)).toEqual([id]);
  });
});

describe('Idempotency-Key across a gateway restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-idempotency-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers the same key after a restart over the same file with the first id', async () => {
    const before = await startApiFixture({ dir });
    const client = await before.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
    const payload = body('353871000011');
    const first = await post(before, client.token, payload, 'across-restart');
    expect(first.status).toBe(202);
    const { id } = (await first.json()) as { id: string };
    await before.close();

    const after = await startApiFixture({ dir });
    try {
      const retry = await post(after, client.token, payload, 'across-restart');
      expect(retry.status).toBe(202);
      expect(((await retry.json()) as { id: string }).id).toBe(id);
      expect(campaignIds(after, client.clientId)).toEqual([id]);
      const other = await post(after, client.token, body('353871000012'), 'across-restart');
      expect(other.status).toBe(422);
    } finally {
      await after.close();
    }
  });
});
