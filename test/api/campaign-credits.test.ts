/**
 * Credits reserved when POST /v1/campaign accepts, and released by processing, over real HTTP
 * against the API on a real SQLite file: the amount (recipients x parts x price by longest prefix),
 * the refusal when too few are available (400, nothing stored), what processing gives back for
 * duplicate and skipped recipients, and sixty concurrent requests against a balance covering twenty.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PricingRule } from '../../src/accounts/credits.js';
import { SqliteCreditLedger } from '../../src/store/sqlite/credit-ledger.js';
import { startApiFixture, type Account, type ApiFixture } from '../support/api-fixture.js';

const PRICING: PricingRule[] = [{ prefix: '353', creditsPerPart: 2 }, { prefix: '1', creditsPerPart: 3 }, { prefix: '44', creditsPerPart: 1 }];
/** 200 GSM-7 characters: two parts of a concatenated SMS. */
const TWO_PART_TEXT = 'x'.repeat(200);

interface LedgerRow { kind: string; credits: number; campaign_id: string | null }

function topUp(fixture: ApiFixture, clientId: number, credits: number): void {
  const ledger = new SqliteCreditLedger(fixture.store.db);
  fixture.store.db.transaction(() => ledger.apply([{ clientId, kind: 'top-up', credits, campaignId: null, note: 'test' }], Date.now())).immediate();
}

function account(fixture: ApiFixture, clientId: number): { balance: number; reserved: number } | undefined {
  return fixture.store.db.prepare('SELECT balance, reserved FROM client_credits WHERE client_id = ?').get(clientId) as { balance: number; reserved: number } | undefined;
}

function ledgerOf(fixture: ApiFixture, clientId: number): LedgerRow[] {
  return fixture.store.db.prepare('SELECT kind, credits, campaign_id FROM credit_ledger WHERE client_id = ? ORDER BY id').all(clientId) as LedgerRow[];
}

/** The ledger's sums, which client_credits must always equal. */
function ledgerSums(fixture: ApiFixture, clientId: number): { balance: number; reserved: number } {
  return fixture.store.db.prepare(
    `SELECT COALESCE(SUM(CASE WHEN kind IN ('top-up', 'correction', 'charge') THEN credits ELSE 0 END), 0) AS balance,
            COALESCE(SUM(CASE WHEN kind IN ('reserve', 'release') THEN credits ELSE 0 END), 0) AS reserved
     FROM credit_ledger WHERE client_id = ?`).get(clientId) as { balance: number; reserved: number };
}

function campaignCount(fixture: ApiFixture, clientId: number): number {
  return (fixture.store.db.prepare('SELECT COUNT(*) AS n FROM campaigns WHERE client_id = ?').get(clientId) as { n: number }).n;
}

async function until<T>(read: () => T, done: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function campaignState(fixture: ApiFixture, id: string): string | undefined {
  return (fixture.store.db.prepare('SELECT state FROM campaigns WHERE id = ?').get(id) as { state: string } | undefined)?.state;
}

describe('credits reserved at acceptance and released by processing', () => {
  let fixture: ApiFixture;

  beforeAll(async () => {
    fixture = await startApiFixture({ pricing: PRICING, startProcessor: false });
  });
  afterAll(async () => {
    await fixture.close();
  });

  it('reserves recipients x parts x the longest-prefix price with the campaign, and fixes each recipient\'s price at processing', async () => {
    const client: Account = await fixture.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
    topUp(fixture, client.clientId, 100);
    // 2 parts x (353: 2, national 087... is 353: 2, 1: 3, 44: 1) = 2 x 8 = 16.
    const res = await fixture.postCampaign(client.token, {
      text: TWO_PART_TEXT, from: 'Acme',
      recipientInfo: [{ msisdn: '353871234567' }, { msisdn: '0871234568' }, { msisdn: '15551234567' }, { msisdn: '447700900123' }],
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    expect(fixture.store.db.prepare('SELECT credits_reserved FROM campaigns WHERE id = ?').get(id)).toEqual({ credits_reserved: 16 });
    expect(ledgerOf(fixture, client.clientId)).toEqual([
      { kind: 'top-up', credits: 100, campaign_id: null },
      { kind: 'reserve', credits: 16, campaign_id: id },
    ]);
    expect(account(fixture, client.clientId)).toEqual({ balance: 100, reserved: 16 });

    await fixture.processor.processOnce();
    expect(campaignState(fixture, id)).toBe('ready');
    expect(fixture.store.db.prepare('SELECT parts_per_message FROM campaigns WHERE id = ?').get(id)).toEqual({ parts_per_message: 2 });
    expect(fixture.store.db.prepare('SELECT msisdn, credits_per_part FROM recipients WHERE campaign_id = ? ORDER BY id').all(id)).toEqual([
      { msisdn: '353871234567', credits_per_part: 2 },
      { msisdn: '353871234568', credits_per_part: 2 },
      { msisdn: '15551234567', credits_per_part: 3 },
      { msisdn: '447700900123', credits_per_part: 1 },
    ]);
    // Every recipient kept: nothing to release.
    expect(ledgerOf(fixture, client.clientId)).toHaveLength(2);
    expect(account(fixture, client.clientId)).toEqual(ledgerSums(fixture, client.clientId));
  });

  it('refuses 400 Validation Error naming the credits needed and available, and stores nothing', async () => {
    const client = await fixture.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
    topUp(fixture, client.clientId, 5);
    const res = await fixture.postCampaign(client.token, {
      text: TWO_PART_TEXT, from: 'Acme', recipientInfo: [{ msisdn: '353871234567' }, { msisdn: '15551234567' }, { msisdn: '447700900123' }],
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await res.json()) as { title: string; status: number; detail: string };
    expect(problem.title).toBe('Validation Error');
    expect(problem.status).toBe(400);
    expect(problem.detail).toBe('not enough credits: the campaign needs 12 credits and 5 are available');
    expect(campaignCount(fixture, client.clientId)).toBe(0);
    expect(ledgerOf(fixture, client.clientId)).toEqual([{ kind: 'top-up', credits: 5, campaign_id: null }]);
    expect(account(fixture, client.clientId)).toEqual({ balance: 5, reserved: 0 });
  });

  it('refuses a request stored in slices the same way: no campaign, no slices, no ledger row', async () => {
    const client = await fixture.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
    topUp(fixture, client.clientId, 4_000);
    const slicesBefore = (fixture.store.db.prepare('SELECT COUNT(*) AS n FROM campaign_request_chunks').get() as { n: number }).n;
    // 2,500 Irish recipients (two stored slices) x 1 part x 2 credits = 5,000.
    const recipientInfo = Array.from({ length: 2_500 }, (_, i) => ({ msisdn: `35386${String(i).padStart(7, '0')}` }));
    const res = await fixture.postCampaign(client.token, { text: 'Hello', from: 'Acme', recipientInfo });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toBe('not enough credits: the campaign needs 5000 credits and 4000 are available');
    expect(campaignCount(fixture, client.clientId)).toBe(0);
    expect((fixture.store.db.prepare('SELECT COUNT(*) AS n FROM campaign_request_chunks').get() as { n: number }).n).toBe(slicesBefore);
    expect(ledgerOf(fixture, client.clientId)).toHaveLength(1);
  });

  it('releases at processing what duplicates, unpermitted and opted-out recipients never use', async () => {
    // Sender type 1 is not permitted for Irish numbers: they are skipped.
    const client = await fixture.createAccount({ senders: [{ name: 'Intl', type: 1 }] });
    topUp(fixture, client.clientId, 50);
    await fixture.ports.inbound.addOptout(client.clientId, '447700900002', 'admin', Date.now());
    const res = await fixture.postCampaign(client.token, {
      text: TWO_PART_TEXT, from: 'Intl',
      recipientInfo: [
        { msisdn: '353871111111' }, // unpermitted: 2
        { msisdn: '447700900001' }, // kept: 1
        { msisdn: '+447700900001' }, // duplicate after normalisation: 1
        { msisdn: '447700900002' }, // opted out: 1
        { msisdn: '15551230000' }, // kept: 3
      ],
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    // Reserved 2 parts x (2 + 1 + 1 + 1 + 3) = 16; the kept cost 2 x (1 + 3) = 8; 8 released.
    expect(account(fixture, client.clientId)).toEqual({ balance: 50, reserved: 16 });
    await fixture.processor.processOnce();
    expect(campaignState(fixture, id)).toBe('ready');
    expect(fixture.store.db.prepare('SELECT msisdn, credits_per_part FROM recipients WHERE campaign_id = ? ORDER BY id').all(id)).toEqual([
      { msisdn: '447700900001', credits_per_part: 1 },
      { msisdn: '15551230000', credits_per_part: 3 },
    ]);
    expect(ledgerOf(fixture, client.clientId)).toEqual([
      { kind: 'top-up', credits: 50, campaign_id: null },
      { kind: 'reserve', credits: 16, campaign_id: id },
      { kind: 'release', credits: -8, campaign_id: id },
    ]);
    expect(account(fixture, client.clientId)).toEqual({ balance: 50, reserved: 8 });
    expect(ledgerSums(fixture, client.clientId)).toEqual({ balance: 50, reserved: 8 });
    // Processing again (a redo after a crash finds it ready) releases nothing more.
    await fixture.processor.processOnce();
    expect(ledgerOf(fixture, client.clientId)).toHaveLength(3);
  });

  it('reserves for a scheduled campaign at acceptance, nothing for a draft, nothing for an unlimited client', async () => {
    const client = await fixture.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
    topUp(fixture, client.clientId, 10);
    const scheduled = await fixture.postCampaign(client.token, { text: 'Later', from: 'Acme', sendAt: '2099-01-01 09:00', recipientInfo: [{ msisdn: '353871234567' }] });
    expect(scheduled.status).toBe(202);
    const scheduledId = ((await scheduled.json()) as { id: string }).id;
    expect(fixture.store.db.prepare('SELECT credits_reserved FROM campaigns WHERE id = ?').get(scheduledId)).toEqual({ credits_reserved: 2 });
    const draft = await fixture.postCampaign(client.token, { text: 'Draft', from: 'Acme', createAsDraft: true, recipientInfo: [{ msisdn: '353871234567' }] });
    expect(draft.status).toBe(202);
    const draftId = ((await draft.json()) as { id: string }).id;
    expect(fixture.store.db.prepare('SELECT state, credits_reserved FROM campaigns WHERE id = ?').get(draftId)).toEqual({ state: 'draft', credits_reserved: null });
    expect(account(fixture, client.clientId)).toEqual({ balance: 10, reserved: 2 });

    // No balance ever given: unlimited, as every client was before credits existed.
    const unlimited = await fixture.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
    const res = await fixture.postCampaign(unlimited.token, { text: TWO_PART_TEXT, from: 'Acme', recipientInfo: [{ msisdn: '15551234567' }] });
    expect(res.status).toBe(202);
    const id = ((await res.json()) as { id: string }).id;
    await fixture.processor.processOnce();
    expect(fixture.store.db.prepare('SELECT credits_reserved FROM campaigns WHERE id = ?').get(id)).toEqual({ credits_reserved: null });
    expect(fixture.store.db.prepare('SELECT credits_per_part FROM recipients WHERE campaign_id = ?').all(id)).toEqual([{ credits_per_part: 0 }]);
    expect(ledgerOf(fixture, unlimited.clientId)).toEqual([]);
    expect(account(fixture, unlimited.clientId)).toBeUndefined();
  });
});

describe('sixty concurrent requests against a balance covering twenty', () => {
  let fixture: ApiFixture;

  beforeAll(async () => {
    fixture = await startApiFixture();
  });
  afterAll(async () => {
    await fixture.close();
  });

  it('accepts exactly twenty, refuses forty, and available never goes below zero', async () => {
    const client = await fixture.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
    topUp(fixture, client.clientId, 20);
    let lowest = Number.POSITIVE_INFINITY;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const now = account(fixture, client.clientId)!;
        lowest = Math.min(lowest, now.balance - now.reserved);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    // One recipient, one part, 1 credit each.
    const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) =>
      fixture.postCampaign(client.token, { text: `Hello ${i}`, from: 'Acme', recipientInfo: [{ msisdn: `3538712${String(i).padStart(5, '0')}` }] })
        .then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        })));
    sampling = false;
    await sampler;
    expect(statuses.filter((s) => s === 202)).toHaveLength(20);
    expect(statuses.filter((s) => s === 400)).toHaveLength(40);
    expect(lowest).toBeGreaterThanOrEqual(0);
    expect(campaignCount(fixture, client.clientId)).toBe(20);
    expect(account(fixture, client.clientId)).toEqual({ balance: 20, reserved: 20 });
    expect(ledgerSums(fixture, client.clientId)).toEqual({ balance: 20, reserved: 20 });
    expect(ledgerOf(fixture, client.clientId).filter((r) => r.kind === 'reserve')).toHaveLength(20);
    // Processed, each keeps its one recipient: nothing released, available stays 0.
    await until(() => fixture.store.db.prepare(`SELECT COUNT(*) AS n FROM campaigns WHERE client_id = ? AND state = 'ready'`).get(client.clientId) as { n: number },
      (r) => r.n === 20, 'all twenty campaigns ready');
    expect(account(fixture, client.clientId)).toEqual({ balance: 20, reserved: 20 });
  });
});
