/**
 * SPEC.md "GET {base_url}/v1/campaign/{id}", "Campaign Summary", "Recipient processing rules",
 * "Recipient" (normalisation), `from` (Irish permitted senders), "Scheduling", "Delivery Receipt",
 * "Authentication" §7 (X-Signature) and "States and transitions", against a real `smsgate serve`
 * with a simulator transport configured with the demo outcome table (config/simulator-demo.json):
 * numbers ending in 9 get an UNDELIV receipt, numbers ending in 8 are rejected at submit (REJECTD),
 * numbers ending in 7 are throttled once and then delivered, every other number gets DELIVRD.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIMULATOR_DEMO_OUTCOMES } from '../../src/transports/simulator/index.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { createReadyCampaign, eventually, getWithToken, postJson, SpecServer, type SpecAccount, type Summary } from './spec-server.js';

const WEBHOOK_SECRET = 'spec-webhook-secret';

let server: SpecServer;
let receiver: WebhookReceiver;
let unsignedReceiver: WebhookReceiver;
let acme: SpecAccount;
let other: SpecAccount;
let unsigned: SpecAccount;
let plainUser: SpecAccount;

beforeAll(async () => {
  receiver = await WebhookReceiver.start({ secret: WEBHOOK_SECRET });
  unsignedReceiver = await WebhookReceiver.start();
  server = await SpecServer.start({
    config: {
      webhooks: { retryDelaysMs: [100, 100, 100] },
      transports: [{ name: 'sim', type: 'simulator', receiptDelayMs: 50, outcomes: SIMULATOR_DEMO_OUTCOMES }],
    },
  });
  acme = await server.createAccount('acme', {
    webhookUrl: receiver.url,
    webhookSecret: WEBHOOK_SECRET,
    senders: [{ name: 'Registered', type: 0 }, { name: 'Foreign', type: 1 }, { name: '353861234567', type: 2 }, { name: 'Zeta', type: 0 }],
  });
  other = await server.createAccount('other', { senders: [{ name: 'OtherCo', type: 0 }] });
  unsigned = await server.createAccount('unsigned', { webhookUrl: unsignedReceiver.url, senders: [{ name: 'Registered', type: 0 }] });
  await server.createUser('acme', 'acme-viewer', false);
  plainUser = { clientName: 'acme', username: 'acme-viewer', token: await server.createToken('acme-viewer') };
}, 180_000);
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  await unsignedReceiver?.close();
});

interface Receipt {
  To: string;
  From: string;
  Status: string;
  ClientReference: string | null;
}

function summaryUrl(id: string): string {
  return server.url(`/v1/campaign/${id}`);
}

/** Receipts received so far for one sender id (each test uses its own sender or numbers). */
function receiptsTo(numbers: readonly string[], from?: string): Receipt[] {
  return (receiver.bodies() as Receipt[]).filter((r) => numbers.includes(r.To) && (from === undefined || r.From === from));
}

async function settledSummary(token: string, id: string): Promise<Summary> {
  return eventually(async () => {
    const res = await getWithToken(summaryUrl(id), token);
    const body = (await res.json()) as Summary;
    return res.status === 200 && body.pending === 0 ? body : undefined;
  }, `campaign ${id} to have no pending recipient`);
}

describe('Campaign Summary', () => {
  it('is 200 application/json with integer totalSent, delivered, undelivered and pending', async () => {
    const { id } = await createReadyCampaign(server, acme.token, { text: 'Summary', from: 'Registered', recipientInfo: [{ msisdn: '447700900001' }] });
    const res = await getWithToken(summaryUrl(id), acme.token);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['delivered', 'pending', 'totalSent', 'undelivered']);
    for (const value of Object.values(body)) {
      expect(Number.isInteger(value)).toBe(true);
      expect(value as number).toBeLessThanOrEqual(2_147_483_647);
    }
  });

  it('moves every recipient from pending to delivered (status DELIV...) or undelivered (anything else)', async () => {
    const recipientInfo = [
      { msisdn: '447700900101' }, { msisdn: '447700900102' }, { msisdn: '447700900103' },
      { msisdn: '447700900109' }, { msisdn: '447700900108' },
    ];
    const { id, summary } = await createReadyCampaign(server, acme.token, { text: 'Outcomes', from: 'Registered', recipientInfo });
    expect(summary.totalSent).toBe(5);
    expect(summary.delivered + summary.undelivered + summary.pending).toBe(5);
    expect(await settledSummary(acme.token, id)).toEqual({ totalSent: 5, delivered: 3, undelivered: 2, pending: 0 });
  });

  it('answers 400 for an id that is not a UUID', async () => {
    for (const bad of ['abc', '12345', '00000000-0000-0000-0000-00000000000g', '00000000000000000000000000000000x']) {
      const res = await getWithToken(summaryUrl(bad), acme.token);
      expect(res.status).toBe(400);
    }
  });

  it('answers 404 Problem Details for an unknown id', async () => {
    const res = await getWithToken(summaryUrl('2d1f3c5e-8a7b-4c6d-9e0f-112233445566'), acme.token);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ title: expect.any(String), status: 404, detail: expect.any(String) });
  });

  it("answers 404 for another account's campaign: only campaigns of the authenticated account are retrievable", async () => {
    const { id } = await createReadyCampaign(server, other.token, { text: 'Mine', from: 'OtherCo', recipientInfo: [{ msisdn: '447700900201' }] });
    expect((await getWithToken(summaryUrl(id), other.token)).status).toBe(200);
    expect((await getWithToken(summaryUrl(id), acme.token)).status).toBe(404);
  });

  it('answers 404 for a draft, which never gets a summary', async () => {
    const draft = await postJson(server.url('/v1/campaign'), acme.token, {
      text: 'Draft', from: 'Registered', createAsDraft: true, recipientInfo: [{ msisdn: '447700900301' }],
    });
    expect(draft.status).toBe(202);
    const { id } = (await draft.json()) as { id: string };
    // A campaign posted after the draft is ready, so the processor has been past the draft.
    await createReadyCampaign(server, acme.token, { text: 'After the draft', from: 'Registered', recipientInfo: [{ msisdn: '447700900302' }] });
    const res = await getWithToken(summaryUrl(id), acme.token);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('answers 404 while the campaign is still processing, then 200 once it is ready', async () => {
    const recipientInfo = Array.from({ length: 100_000 }, (_, i) => ({ msisdn: `4475${String(i).padStart(8, '0')}` }));
    const accepted = await postJson(server.url('/v1/campaign'), acme.token, { text: 'Big', from: 'Registered', sendAt: '2099-01-01T00:00', recipientInfo });
    expect(accepted.status).toBe(202);
    const { id } = (await accepted.json()) as { id: string };
    expect((await getWithToken(summaryUrl(id), acme.token)).status).toBe(404);
    const summary = await eventually(async () => {
      const res = await getWithToken(summaryUrl(id), acme.token);
      return res.status === 200 ? ((await res.json()) as Summary) : undefined;
    }, 'the 100,000-recipient campaign to be ready', 60_000);
    expect(summary).toEqual({ totalSent: 100_000, delivered: 0, undelivered: 0, pending: 100_000 });
  }, 90_000);

  it('answers 401 without a token or with an invalid one', async () => {
    const { id } = await createReadyCampaign(server, acme.token, { text: 'x', from: 'Registered', recipientInfo: [{ msisdn: '447700900401' }] });
    expect((await getWithToken(summaryUrl(id), undefined)).status).toBe(401);
    expect((await getWithToken(summaryUrl(id), 'smsgate_pat_0000000000000000000000000000000000000000000')).status).toBe(401);
  });

  it('answers 403 Problem Details (title Forbidden) for a user who is not a client administrator', async () => {
    const { id } = await createReadyCampaign(server, acme.token, { text: 'x', from: 'Registered', recipientInfo: [{ msisdn: '447700900402' }] });
    const res = await getWithToken(summaryUrl(id), plainUser.token);
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ title: 'Forbidden', status: 403, detail: expect.any(String) });
  });
});

describe('Recipient processing rules', () => {
  it('stores supported Irish formats as 353... and UK numbers as 44...; other digits unchanged', async () => {
    const recipientInfo = [
      { msisdn: '0871110001', ClientReference: 'national' },
      { msisdn: '353871110002', ClientReference: 'plain' },
      { msisdn: '+353871110003', ClientReference: 'plus' },
      { msisdn: '00353871110004', ClientReference: 'double-zero' },
      { msisdn: '07700911005', ClientReference: 'uk-national' },
      { msisdn: '+447700911006', ClientReference: 'uk-plus' },
      { msisdn: '12025550107', ClientReference: 'other' },
    ];
    const { id, summary } = await createReadyCampaign(server, acme.token, { text: 'Norm', from: 'Registered', recipientInfo });
    expect(summary.totalSent).toBe(7);
    await settledSummary(acme.token, id);
    const expected = ['353871110001', '353871110002', '353871110003', '353871110004', '447700911005', '447700911006', '12025550107'];
    await receiver.waitUntil(() => receiptsTo(expected, 'Registered').length >= 7);
    const byRef = new Map(receiptsTo(expected, 'Registered').map((r) => [r.ClientReference, r.To]));
    expect(Object.fromEntries(byRef)).toEqual({
      national: '353871110001', plain: '353871110002', 'double-zero': '353871110004', plus: '353871110003',
      'uk-national': '447700911005', 'uk-plus': '447700911006', other: '12025550107',
    });
  });

  it('detects duplicates after normalisation and keeps the first entry and its ClientReference', async () => {
    const recipientInfo = [
      { msisdn: '0871220001', ClientReference: 'first' },
      { msisdn: '+353871220001', ClientReference: 'second' },
      { msisdn: '00353871220001', ClientReference: 'third' },
      { msisdn: '447700922002' },
      { msisdn: '07700922002', ClientReference: 'late' },
    ];
    const { id, summary } = await createReadyCampaign(server, acme.token, { text: 'Dupes', from: 'Registered', recipientInfo });
    expect(summary.totalSent).toBe(2);
    await settledSummary(acme.token, id);
    await receiver.waitUntil(() => receiptsTo(['353871220001', '447700922002']).length >= 2);
    const receipts = receiptsTo(['353871220001', '447700922002']);
    expect(receipts).toHaveLength(2);
    expect(receipts.find((r) => r.To === '353871220001')?.ClientReference).toBe('first');
    expect(receipts.find((r) => r.To === '447700922002')?.ClientReference).toBeNull();
  });

  const permission: Array<[string, string, boolean]> = [
    ['a sender of type 0 (registered with the national regulator) reaches Irish numbers', 'Registered', true],
    ['a numeric sender of type 2 reaches Irish numbers', '353861234567', true],
    ['a sender of type 1 (international, not approved) does not: Irish recipients are skipped', 'Foreign', false],
    ['a sender not on the account\'s list does not: Irish recipients are skipped', 'Unlisted', false],
    ["another account's permitted sender does not", 'OtherCo', false],
  ];
  for (const [name, from, permitted] of permission) {
    it(`Irish recipients: ${name}; other recipients continue`, async () => {
      const recipientInfo = [{ msisdn: '0871330001' }, { msisdn: '+353871330002' }, { msisdn: '447700933003' }];
      const { summary } = await createReadyCampaign(server, acme.token, { text: 'Irish', from, recipientInfo });
      expect(summary.totalSent).toBe(permitted ? 3 : 1);
    });
  }

  it('one number that cannot be normalised does not stop the campaign', async () => {
    const { summary } = await createReadyCampaign(server, acme.token, {
      text: 'Mixed', from: 'Registered', recipientInfo: [{ msisdn: '00' }, { msisdn: '447700944001' }],
    });
    expect(summary.totalSent).toBe(1);
  });
});

describe('Delivery Receipt webhook', () => {
  it('is signed X-Signature sha256=<64 lowercase hex> over the raw body, with exactly To, From, Status, ClientReference', async () => {
    const { id } = await createReadyCampaign(server, acme.token, {
      text: 'Signed', from: 'Zeta', recipientInfo: [{ msisdn: '447700955001', ClientReference: 'ref-signed' }, { msisdn: '447700955009' }],
    });
    await settledSummary(acme.token, id);
    await receiver.waitUntil(() => receiptsTo(['447700955001', '447700955009'], 'Zeta').length >= 2);
    const requests = receiver.requests.filter((r) => r.rawBody.toString('utf8').includes('"From":"Zeta"'));
    expect(requests.length).toBeGreaterThanOrEqual(2);
    for (const request of requests) {
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toMatch(/^application\/json/);
      expect(request.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
      const expected = `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(request.rawBody).digest('hex')}`;
      expect(request.signature).toBe(expected);
      const body = JSON.parse(request.rawBody.toString('utf8')) as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(['To', 'From', 'Status', 'ClientReference']);
      expect((body['Status'] as string).length).toBeLessThanOrEqual(30);
    }
    const receipts = receiptsTo(['447700955001', '447700955009'], 'Zeta');
    expect(receipts.find((r) => r.To === '447700955001')).toEqual({ To: '447700955001', From: 'Zeta', Status: 'DELIVRD', ClientReference: 'ref-signed' });
    expect(receipts.find((r) => r.To === '447700955009')).toEqual({ To: '447700955009', From: 'Zeta', Status: 'UNDELIV', ClientReference: null });
  });

  it('omits X-Signature when the account has no webhook secret', async () => {
    const { id } = await createReadyCampaign(server, unsigned.token, { text: 'Unsigned', from: 'Registered', recipientInfo: [{ msisdn: '447700966001' }] });
    await settledSummary(unsigned.token, id);
    await unsignedReceiver.waitForCount(1);
    const request = unsignedReceiver.requests[0]!;
    expect(request.headers['x-signature']).toBeUndefined();
    expect(JSON.parse(request.rawBody.toString('utf8'))).toEqual({ To: '447700966001', From: 'Registered', Status: 'DELIVRD', ClientReference: null });
  });
});

describe('Scheduling', () => {
  it('a past sendAt is sent at once', async () => {
    const { id } = await createReadyCampaign(server, acme.token, { text: 'Past', from: 'Registered', sendAt: '2020-01-01T09:00', recipientInfo: [{ msisdn: '447700977001' }] });
    expect(await settledSummary(acme.token, id)).toEqual({ totalSent: 1, delivered: 1, undelivered: 0, pending: 0 });
  });

  it('a future sendAt is ready (summary exists) but stays pending while an immediate campaign is delivered', async () => {
    const { id: later } = await createReadyCampaign(server, acme.token, {
      text: 'Future', from: 'Registered', sendAt: '2099-06-01 09:00:30', recipientInfo: [{ msisdn: '447700977002' }],
    });
    const { id: now } = await createReadyCampaign(server, acme.token, { text: 'Now', from: 'Registered', recipientInfo: [{ msisdn: '447700977003' }] });
    await settledSummary(acme.token, now);
    const res = await getWithToken(summaryUrl(later), acme.token);
    expect(await res.json()).toEqual({ totalSent: 1, delivered: 0, undelivered: 0, pending: 1 });
    expect(receiptsTo(['447700977002'])).toEqual([]);
  });
});

describe('Deactivated accounts (Authentication §4)', () => {
  it('a valid token whose account is not active gets 403 on both campaign endpoints', async () => {
    const account = await server.createAccount('closing', { senders: [{ name: 'Closing', type: 0 }] });
    const { id } = await createReadyCampaign(server, account.token, { text: 'x', from: 'Closing', recipientInfo: [{ msisdn: '447700988001' }] });
    // No admin command deactivates an account; the row is changed as an operator would in the database.
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(`${server.dir}/smsgate.sqlite`);
    try {
      db.pragma('busy_timeout = 5000');
      db.prepare('UPDATE clients SET active = 0 WHERE name = ?').run('closing');
    } finally {
      db.close();
    }
    const summary = await getWithToken(summaryUrl(id), account.token);
    expect(summary.status).toBe(403);
    const created = await postJson(server.url('/v1/campaign'), account.token, { text: 'x', from: 'Closing', recipientInfo: [{ msisdn: '447700988002' }] });
    expect(created.status).toBe(403);
    expect(await created.json()).toMatchObject({ title: 'Forbidden', status: 403, detail: 'Authenticated user is not a recognized client administrator' });
  });
});
