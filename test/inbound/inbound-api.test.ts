/**
 * GET /v1/inbound over HTTP on loopback with a real SQLite file: each account sees only its
 * own messages, oldest first, paged with `limit` and `next`, filtered with `since`; 401 with
 * `WWW-Authenticate: Bearer`, 403 for a non-administrator, 400 naming the bad query field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InboundAdmin } from '../../src/inbound/inbound-admin.js';
import { InboundService } from '../../src/inbound/inbound-service.js';
import { silentLogger } from '../../src/common/log.js';
import { startApiFixture, type Account, type ApiFixture } from '../support/api-fixture.js';

let api: ApiFixture;
let acme: Account;
let globex: Account;
const T0 = Date.UTC(2025, 5, 1, 8, 0, 0);
const clock = { nowMs: T0 };
let service: InboundService;

beforeAll(async () => {
  api = await startApiFixture({ startProcessor: false });
  acme = await api.createAccount({ clientName: 'acme' });
  globex = await api.createAccount({ clientName: 'globex' });
  const admin = new InboundAdmin(api.ports.inbound);
  await admin.addRoute('acme', '50123');
  await admin.addRoute('globex', '50999');
  service = new InboundService({ store: api.ports.inbound, logger: silentLogger(), now: () => clock.nowMs, wakeWebhooks: () => undefined });
  const receive = async (to: string, text: string): Promise<void> => {
    await service.receive('sim', { from: '0861234567', to, text, receivedAt: '', raw: text });
    clock.nowMs += 60_000;
  };
  for (let i = 1; i <= 5; i++) await receive('50123', `acme ${i}`);
  await receive('50999', 'globex only');
  await receive('50000', 'nobody');
  // A message made from what arrived: one part of two, after the reassembly timeout.
  await service.receive('sim', { from: '0861234567', to: '50123', text: 'half', receivedAt: '', raw: '', concat: { scheme: 'udh8', reference: 1, total: 2, sequence: 1 } });
  clock.nowMs += 10 * 60_000;
  await service.sweep();
});
afterAll(async () => {
  await api.close();
});

async function get(token: string | undefined, query = ''): Promise<Response> {
  return fetch(`${api.baseUrl}/v1/inbound${query}`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
}

interface Page {
  messages: { id: string; from: string; to: string; text: string; receivedAt: string; incomplete: boolean }[];
  next: string | null;
}

describe('GET /v1/inbound', () => {
  it("lists the account's own messages oldest first with exactly the six fields, and next null at the end", async () => {
    const response = await get(acme.token);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const page = (await response.json()) as Page;
    expect(page.messages.map((m) => m.text)).toEqual(['acme 1', 'acme 2', 'acme 3', 'acme 4', 'acme 5', 'half']);
    expect(Object.keys(page.messages[0] ?? {})).toEqual(['id', 'from', 'to', 'text', 'receivedAt', 'incomplete']);
    expect(page.messages[0]).toMatchObject({ from: '353861234567', to: '50123', receivedAt: new Date(T0).toISOString(), incomplete: false });
    expect(page.messages[5]?.incomplete).toBe(true);
    expect(page.next).toBeNull();
    const other = (await (await get(globex.token)).json()) as Page;
    expect(other.messages.map((m) => m.text)).toEqual(['globex only']);
  });

  it('pages with limit and next, and filters with since (inclusive)', async () => {
    const first = (await (await get(acme.token, '?limit=2')).json()) as Page;
    expect(first.messages.map((m) => m.text)).toEqual(['acme 1', 'acme 2']);
    expect(first.next).toEqual(expect.any(String));
    const second = (await (await get(acme.token, `?limit=2&cursor=${first.next}`)).json()) as Page;
    expect(second.messages.map((m) => m.text)).toEqual(['acme 3', 'acme 4']);
    const third = (await (await get(acme.token, `?limit=2&cursor=${second.next}`)).json()) as Page;
    expect(third.messages.map((m) => m.text)).toEqual(['acme 5', 'half']);
    expect(third.next).toBeNull();
    const since = new Date(T0 + 2 * 60_000).toISOString();
    const recent = (await (await get(acme.token, `?since=${encodeURIComponent(since)}`)).json()) as Page;
    expect(recent.messages.map((m) => m.text)).toEqual(['acme 3', 'acme 4', 'acme 5', 'half']);
    const offset = (await (await get(acme.token, `?since=${encodeURIComponent('2025-06-01T10:04:00+02:00')}`)).json()) as Page;
    expect(offset.messages.map((m) => m.text)).toEqual(['acme 5', 'half']);
  });

  it('a client polling with since misses no multi-part message completed after its last look', async () => {
    const latest = (await (await get(globex.token)).json()) as Page;
    expect(latest.messages.map((m) => m.text)).toEqual(['globex only']);
    // Part 1 arrives, then a one-part message, then part 2.
    const part = (sequence: number, text: string) => ({ from: '447700900123', to: '50999', text, receivedAt: '', raw: text, concat: { scheme: 'udh8' as const, reference: 9, total: 2, sequence } });
    await service.receive('sim', part(1, 'long '));
    clock.nowMs += 1_000;
    await service.receive('sim', { from: '0861234567', to: '50999', text: 'short', receivedAt: '', raw: 'short' });
    const seen = (await (await get(globex.token, `?since=${encodeURIComponent(latest.messages[0]!.receivedAt)}`)).json()) as Page;
    expect(seen.messages.map((m) => m.text)).toEqual(['globex only', 'short']);
    clock.nowMs += 1_000;
    await service.receive('sim', part(2, 'reply'));
    const since = encodeURIComponent(seen.messages[1]!.receivedAt);
    const polled = (await (await get(globex.token, `?since=${since}`)).json()) as Page;
    expect(polled.messages.map((m) => m.text)).toEqual(['short', 'long reply']);
    expect(polled.messages[1]!.receivedAt).toBe(new Date(clock.nowMs).toISOString());
    // The cursor of a page ending at 'short' leads to the completed message too.
    const page = (await (await get(globex.token, '?limit=2')).json()) as Page;
    expect(page.messages.map((m) => m.text)).toEqual(['globex only', 'short']);
    const next = (await (await get(globex.token, `?cursor=${String(page.next)}`)).json()) as Page;
    expect(next).toEqual({ messages: [expect.objectContaining({ text: 'long reply' })], next: null });
  });

  it('answers 401 with WWW-Authenticate: Bearer and no body without a valid token', async () => {
    for (const token of [undefined, 'smsgate_pat_nope']) {
      const response = await get(token);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(await response.text()).toBe('');
    }
  });

  it('answers 403 problem+json for a user who is not a client administrator', async () => {
    const user = await api.createAccount({ clientName: 'initech', admin: false });
    const response = await get(user.token);
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toEqual({ title: 'Forbidden', status: 403, detail: 'Authenticated user is not a recognized client administrator' });
  });

  it('answers 400 problem+json naming the bad field', async () => {
    const cases: [string, string][] = [
      ['?limit=0', 'limit'], ['?limit=1001', 'limit'], ['?limit=ten', 'limit'],
      ['?since=yesterday', 'since'], ['?since=2025-06-01T10:00:00', 'since'], ['?cursor=%21%21', 'cursor'],
      ['?limit=1&limit=2', 'limit'], ['?page=2', 'page'],
    ];
    for (const [query, field] of cases) {
      const response = await get(acme.token, query);
      expect(response.status, query).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = (await response.json()) as { title: string; status: number; detail: string };
      expect(problem.title).toBe('Validation Error');
      expect(problem.detail.startsWith(field) || problem.detail.includes(`'${field}'`), `${query}: ${problem.detail}`).toBe(true);
    }
  });
});
