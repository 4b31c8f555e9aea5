import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CampaignProcessor, RECIPIENTS_PER_TRANSACTION } from '../../src/campaigns/index.js';
import { silentLogger } from '../../src/common/log.js';
import { startApiFixture, type Account, type ApiFixture } from '../support/api-fixture.js';
import { ManualClock } from '../support/manual-clock.js';

type Row = Record<string, unknown>;

let fixture: ApiFixture;
let admin: Account;

beforeAll(async () => {
  // Processing is driven by hand here: processOnce() after each POST.
  fixture = await startApiFixture({ startProcessor: false });
  admin = await fixture.createAccount({
    senders: [{ name: 'Registered', type: 0 }, { name: 'Intl', type: 1 }, { name: '353861234567', type: 2 }],
  });
});
afterAll(async () => {
  await fixture.close();
});

async function accept(body: Row, token = admin.token): Promise<string> {
  const res = await fixture.postCampaign(token, body);
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

function campaignRow(id: string): Row {
  return fixture.store.db.prepare('SELECT * FROM campaigns WHERE id = ?').get(id) as Row;
}

function recipientRows(id: string): Row[] {
  return fixture.store.db.prepare(
    'SELECT msisdn, client_reference, dispatch_state, status FROM recipients WHERE campaign_id = ? ORDER BY id',
  ).all(id) as Row[];
}

async function summary(id: string): Promise<Row> {
  const res = await fixture.getSummary(admin.token, id);
  expect(res.status).toBe(200);
  return (await res.json()) as Row;
}

/** Polls a condition with a deadline (never a sleep standing in for it). */
async function waitUntil(done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('CampaignProcessor', () => {
  it('turns a queued campaign into waiting, pending recipients and marks it ready', async () => {
    const id = await accept({
      text: '\u2018Hi\u2019 \u2014 sale\u2026', from: 'Registered', sendAt: '2026-07-01T09:30:45',
      recipientInfo: [{ msisdn: '0871234567', ClientReference: 'a' }, { msisdn: '07700900123' }, { msisdn: '12025550123', ClientReference: null }],
    });
    const readyIds: string[] = [];
    const processor = new CampaignProcessor({ store: fixture.ports, logger: silentLogger(), now: () => 1_780_000_000_000, onReady: (c) => readyIds.push(c) });
    expect(await processor.processOnce()).toBe(1);
    expect(readyIds).toEqual([id]);
    expect(campaignRow(id)).toMatchObject({
      state: 'ready', text_sent: "'Hi' - sale.", encoding: 'GSM-7', parts_per_message: 1, total_sent: 3, skipped_count: 0,
      request_recipients: null, ready_at: 1_780_000_000_000, send_at: Date.UTC(2026, 6, 1, 8, 30),
    });
    expect(recipientRows(id)).toEqual([
      { msisdn: '353871234567', client_reference: 'a', dispatch_state: 'waiting', status: 'pending' },
      { msisdn: '447700900123', client_reference: null, dispatch_state: 'waiting', status: 'pending' },
      { msisdn: '12025550123', client_reference: null, dispatch_state: 'waiting', status: 'pending' },
    ]);
    expect(await summary(id)).toEqual({ totalSent: 3, delivered: 0, undelivered: 0, pending: 3 });
  });

  it('uses the processing time as send_at when sendAt was omitted', async () => {
    const id = await accept({ text: 'x', from: 'Registered', recipientInfo: [{ msisdn: '1' }] });
    const processor = new CampaignProcessor({ store: fixture.ports, logger: silentLogger(), now: () => 1_790_000_000_000 });
    await processor.processOnce();
    expect(campaignRow(id)).toMatchObject({ send_at: 1_790_000_000_000 });
  });

  it('counts parts from the encoding: 161 GSM-7 characters are 2 parts, 71 UCS-2 characters are 2 parts', async () => {
    const gsm = await accept({ text: 'a'.repeat(161), from: 'Registered', recipientInfo: [{ msisdn: '1' }] });
    const ucs = await accept({ text: '\u0416'.repeat(71), from: 'Registered', recipientInfo: [{ msisdn: '1' }] });
    await fixture.processor.processOnce();
    expect(campaignRow(gsm)).toMatchObject({ encoding: 'GSM-7', parts_per_message: 2 });
    expect(campaignRow(ucs)).toMatchObject({ encoding: 'UCS-2', parts_per_message: 2 });
  });

  it('drops duplicates after normalisation and keeps the first ClientReference', async () => {
    const id = await accept({
      text: 'x', from: 'Registered',
      recipientInfo: [
        { msisdn: '+353871234567', ClientReference: 'first' },
        { msisdn: '0871234567', ClientReference: 'second' },
        { msisdn: '00353871234567', ClientReference: 'third' },
        { msisdn: '353871234568', ClientReference: 'other' },
      ],
    });
    await fixture.processor.processOnce();
    expect(recipientRows(id).map((r) => [r['msisdn'], r['client_reference']])).toEqual([
      ['353871234567', 'first'],
      ['353871234568', 'other'],
    ]);
    expect(campaignRow(id)).toMatchObject({ total_sent: 2, skipped_count: 2 });
    expect(await summary(id)).toEqual({ totalSent: 2, delivered: 0, undelivered: 0, pending: 2 });
  });

  const ALL_RECIPIENTS = ['353871234567', '353861111111', '447700900123'];
  const NON_IRISH_ONLY = ['447700900123'];
  it.each<[string, string, number, string[]]>([
    ['type 0 (registered)', 'Registered', 3, ALL_RECIPIENTS],
    ['type 2 (numeric)', ' 353861234567 ', 3, ALL_RECIPIENTS],
    ['type 1 (international, not approved)', 'Intl', 1, NON_IRISH_ONLY],
    ['not on the list', 'Unlisted', 1, NON_IRISH_ONLY],
    ['on the list in another casing', 'registered', 1, NON_IRISH_ONLY],
  ])('Irish recipients with a sender %s', async (_name, from, expectedTotal, expectedMsisdns) => {
    const id = await accept({
      text: 'x', from,
      recipientInfo: [{ msisdn: '0871234567' }, { msisdn: '+353861111111' }, { msisdn: '447700900123' }],
    });
    await fixture.processor.processOnce();
    expect((await summary(id))['totalSent']).toBe(expectedTotal);
    expect(recipientRows(id).map((r) => r['msisdn'])).toEqual(expectedMsisdns);
  });

  it('only the account of the campaign permits a sender: another account listing it does not count', async () => {
    const other = await fixture.createAccount({ senders: [{ name: 'OtherBrand', type: 0 }] });
    const id = await accept({ text: 'x', from: 'OtherBrand', recipientInfo: [{ msisdn: '0871234567' }] });
    await fixture.processor.processOnce();
    expect((await summary(id))['totalSent']).toBe(0);
    expect(other.clientId).not.toBe(admin.clientId);
  });

  it('marks a campaign with no acceptable recipient ready with totalSent 0', async () => {
    const id = await accept({ text: 'x', from: 'Unlisted', recipientInfo: [{ msisdn: '0871234567' }, { msisdn: '00' }] });
    await fixture.processor.processOnce();
    expect(campaignRow(id)).toMatchObject({ state: 'ready', total_sent: 0, skipped_count: 2 });
    expect(await summary(id)).toEqual({ totalSent: 0, delivered: 0, undelivered: 0, pending: 0 });
  });

  it('redoes a campaign left in processing by a crash, replacing its partial recipients', async () => {
    const id = await accept({ text: 'x', from: 'Registered', recipientInfo: [{ msisdn: '1' }, { msisdn: '2' }, { msisdn: '3' }] });
    // What a crash in the middle of an earlier attempt could leave behind.
    fixture.store.db.prepare("UPDATE campaigns SET state = 'processing' WHERE id = ?").run(id);
    fixture.store.db.prepare("INSERT INTO recipients (campaign_id, msisdn, dispatch_state, status) VALUES (?, '1', 'waiting', 'pending'), (?, '999', 'waiting', 'pending')").run(id, id);
    const restarted = new CampaignProcessor({ store: fixture.ports, logger: silentLogger() });
    expect(await restarted.processOnce()).toBe(1);
    expect(recipientRows(id).map((r) => r['msisdn'])).toEqual(['1', '2', '3']);
    expect(campaignRow(id)).toMatchObject({ state: 'ready', total_sent: 3 });
  });

  it('leaves a campaign processing, not failed, when PostgreSQL drops the connection or fills its disk, and finishes it on the next pass', async () => {
    // The SQLSTATEs a PostgreSQL backend answers with: 57P01 admin_shutdown, 53100 disk_full.
    for (const sqlstate of ['57P01', '53100']) {
      const id = await accept({ text: 'x', from: 'Registered', recipientInfo: [{ msisdn: '1' }, { msisdn: '2' }] });
      let refusals = 1;
      const campaigns = {
        ...fixture.ports.campaigns,
        appendRecipients: (...args: Parameters<typeof fixture.ports.campaigns.appendRecipients>) => {
          if (refusals-- > 0) return Promise.reject(Object.assign(new Error(`refused (${sqlstate})`), { code: sqlstate }));
          return fixture.ports.campaigns.appendRecipients(...args);
        },
      };
      const processor = new CampaignProcessor({ store: { ...fixture.ports, campaigns }, logger: silentLogger() });
      expect(await processor.processOnce()).toBe(0);
      expect(campaignRow(id)).toMatchObject({ state: 'processing', failure_reason: null });
      expect(await processor.processOnce()).toBe(1);
      expect(campaignRow(id)).toMatchObject({ state: 'ready', total_sent: 2 });
    }
  });

  it('does nothing on a second pass: a ready campaign is never processed again', async () => {
    const id = await accept({ text: 'x', from: 'Registered', recipientInfo: [{ msisdn: '1' }] });
    await fixture.processor.processOnce();
    fixture.store.db.prepare("UPDATE recipients SET status = 'delivered' WHERE campaign_id = ?").run(id);
    expect(await fixture.processor.processOnce()).toBe(0);
    expect(await summary(id)).toEqual({ totalSent: 1, delivered: 1, undelivered: 0, pending: 0 });
  });

  it('marks a campaign whose stored request is unreadable failed (404) and goes on with the next', async () => {
    const broken = await accept({ text: 'x', from: 'Registered', recipientInfo: [{ msisdn: '1' }] });
    fixture.store.db.prepare("UPDATE campaigns SET request_recipients = '{oops' WHERE id = ?").run(broken);
    const next = await accept({ text: 'x', from: 'Registered', recipientInfo: [{ msisdn: '1' }] });
    expect(await fixture.processor.processOnce()).toBe(1);
    expect(campaignRow(broken)).toMatchObject({ state: 'failed' });
    expect(String(campaignRow(broken)['failure_reason']).length).toBeGreaterThan(0);
    expect((await fixture.getSummary(admin.token, broken)).status).toBe(404);
    expect(campaignRow(next)).toMatchObject({ state: 'ready' });
  });

  it('is woken by an accept when started, without waiting for a poll', async () => {
    let resolveReady: (id: string) => void = () => undefined;
    const ready = new Promise<string>((resolve) => {
      resolveReady = resolve;
    });
    const clock = new ManualClock(0);
    const processor = new CampaignProcessor({
      store: fixture.ports, logger: silentLogger(), pollIntervalMs: 3_600_000, onReady: (id) => resolveReady(id), clock,
    });
    processor.start();
    // The first pass (crash recovery) finds nothing and the loop sleeps on the clock, which never
    // moves here: only wake() can run another pass.
    await waitUntil(() => clock.pendingTimers() === 1);
    const id = await accept({ text: 'x', from: 'Registered', recipientInfo: [{ msisdn: '1' }] });
    processor.wake();
    expect(await ready).toBe(id);
    await processor.stop();
  });

  it('finds a campaign nobody woke it for at its next poll (processing.pollIntervalMs on the clock), not before', async () => {
    const readyIds: string[] = [];
    const clock = new ManualClock(0);
    const processor = new CampaignProcessor({ store: fixture.ports, logger: silentLogger(), pollIntervalMs: 200, onReady: (id) => readyIds.push(id), clock });
    processor.start();
    await waitUntil(() => clock.pendingTimers() === 1);
    const id = await accept({ text: 'poll', from: 'Registered', recipientInfo: [{ msisdn: '0871234500' }] });
    clock.advanceTo(199);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(clock.pendingTimers()).toBe(1);
    expect(campaignRow(id)).toMatchObject({ state: 'queued' });
    clock.advanceTo(200);
    // The pass ran and the loop sleeps again.
    await waitUntil(() => clock.pendingTimers() === 1 && campaignRow(id)['state'] === 'ready');
    expect(readyIds).toEqual([id]);
    await processor.stop();
  });

  it('writes a large campaign in transactions of RECIPIENTS_PER_TRANSACTION, giving the event loop back between them', async () => {
    const total = RECIPIENTS_PER_TRANSACTION * 4 + 1;
    const recipientInfo = Array.from({ length: total }, (_, i) => ({ msisdn: `4477${String(i).padStart(8, '0')}` }));
    const id = await accept({ text: 'chunked', from: 'Registered', recipientInfo });
    const seen: Array<{ state: unknown; written: number }> = [];
    let watching = true;
    const watch = (): void => {
      if (!watching) return;
      const written = (fixture.store.db.prepare('SELECT COUNT(*) AS n FROM recipients WHERE campaign_id = ?').get(id) as { n: number }).n;
      seen.push({ state: campaignRow(id)['state'], written });
      setImmediate(watch);
    };
    setImmediate(watch);
    expect(await fixture.processor.processOnce()).toBe(1);
    watching = false;
    // Other callbacks ran while the campaign was half written: each saw whole chunks, never a ready campaign.
    const partial = seen.filter((s) => s.written > 0 && s.written < total);
    expect(partial.length).toBeGreaterThanOrEqual(3);
    for (const s of partial) {
      expect(s.state).toBe('processing');
      expect(s.written % RECIPIENTS_PER_TRANSACTION).toBe(0);
    }
    expect(campaignRow(id)).toMatchObject({ state: 'ready', total_sent: total });
  });

  it('redoes a campaign whose earlier attempt wrote more than one chunk, replacing every partial recipient', async () => {
    const recipientInfo = Array.from({ length: 7 }, (_, i) => ({ msisdn: `44770090000${i}` }));
    const id = await accept({ text: 'x', from: 'Registered', recipientInfo });
    fixture.store.db.prepare("UPDATE campaigns SET state = 'processing' WHERE id = ?").run(id);
    const leftover = fixture.store.db.prepare("INSERT INTO recipients (campaign_id, msisdn, dispatch_state, status) VALUES (?, ?, 'waiting', 'pending')");
    fixture.store.db.transaction(() => {
      for (let i = 0; i < RECIPIENTS_PER_TRANSACTION * 2 + 3; i++) leftover.run(id, `9${i}`);
    })();
    const restarted = new CampaignProcessor({ store: fixture.ports, logger: silentLogger() });
    expect(await restarted.processOnce()).toBe(1);
    expect(recipientRows(id).map((r) => r['msisdn'])).toEqual(recipientInfo.map((r) => r.msisdn));
    expect(campaignRow(id)).toMatchObject({ state: 'ready', total_sent: 7 });
  });

  it('stops between chunks: the campaign stays processing and a restarted processor completes it exactly once', async () => {
    const total = RECIPIENTS_PER_TRANSACTION * 3;
    const recipientInfo = Array.from({ length: total }, (_, i) => ({ msisdn: `4478${String(i).padStart(8, '0')}` }));
    const id = await accept({ text: 'stopped', from: 'Registered', recipientInfo });
    const processor = new CampaignProcessor({ store: fixture.ports, logger: silentLogger(), pollIntervalMs: 3_600_000 });
    let stopping: Promise<void> | undefined;
    const stopOnceWriting = (): void => {
      const written = (fixture.store.db.prepare('SELECT COUNT(*) AS n FROM recipients WHERE campaign_id = ?').get(id) as { n: number }).n;
      if (written > 0) stopping = processor.stop();
      else setImmediate(stopOnceWriting);
    };
    processor.start();
    setImmediate(stopOnceWriting);
    await new Promise<void>((resolve) => {
      const check = (): void => (stopping === undefined ? void setImmediate(check) : resolve());
      check();
    });
    await stopping;
    expect(campaignRow(id)['state']).toBe('processing');
    const written = recipientRows(id).length;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(total);

    const restarted = new CampaignProcessor({ store: fixture.ports, logger: silentLogger() });
    expect(await restarted.processOnce()).toBe(1);
    expect(campaignRow(id)).toMatchObject({ state: 'ready', total_sent: total });
    const distinct = fixture.store.db.prepare('SELECT COUNT(DISTINCT msisdn) AS d, COUNT(*) AS n FROM recipients WHERE campaign_id = ?').get(id);
    expect(distinct).toEqual({ d: total, n: total });
  });

  it('deletes the recipients an attempt wrote when the campaign is marked failed', async () => {
    const id = await accept({ text: 'x', from: 'Registered', recipientInfo: [{ msisdn: '1' }] });
    fixture.store.db.prepare("UPDATE campaigns SET state = 'processing', send_at_local = 'not a time' WHERE id = ?").run(id);
    fixture.store.db.prepare("INSERT INTO recipients (campaign_id, msisdn, dispatch_state, status) VALUES (?, '1', 'waiting', 'pending')").run(id);
    await fixture.processor.processOnce();
    expect(campaignRow(id)['state']).toBe('failed');
    expect(recipientRows(id)).toEqual([]);
  });

  it('processes a 100,000-recipient campaign with every recipient written once', async () => {
    const recipientInfo = Array.from({ length: 100_000 }, (_, i) => ({ msisdn: `3538${String(i).padStart(8, '0')}`, ClientReference: `ref-${i}` }));
    recipientInfo.push({ msisdn: '353800000000', ClientReference: 'duplicate of the first' });
    const id = await accept({ text: 'Big campaign', from: 'Registered', recipientInfo });
    expect(await fixture.processor.processOnce()).toBe(1);
    expect(campaignRow(id)).toMatchObject({ state: 'ready', total_sent: 100_000, skipped_count: 1 });
    expect(await summary(id)).toEqual({ totalSent: 100_000, delivered: 0, undelivered: 0, pending: 100_000 });
    const first = fixture.store.db.prepare('SELECT client_reference FROM recipients WHERE campaign_id = ? AND msisdn = ?').get(id, '353800000000');
    expect(first).toEqual({ client_reference: 'ref-0' });
    const last = fixture.store.db.prepare('SELECT client_reference FROM recipients WHERE campaign_id = ? AND msisdn = ?').get(id, '353800099999');
    expect(last).toEqual({ client_reference: 'ref-99999' });
  });
});
