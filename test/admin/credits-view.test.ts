/**
 * A client's credits as an operator watches them on a running gateway with credits.lowThreshold
 * 1,000: scraped from /metrics over HTTP (smsgate_client_credits_available{client}, none for an
 * unlimited client, promtool-clean with a name that needs escaping), shown on /status in headless
 * Chromium and in /status.json (balance, reserved, available, send rate, the "low" marker), and
 * the low warning logged once per crossing. Credits move through the ledger writer the API and
 * the engine use, on a second connection to the gateway's SQLite file, as `smsgate credits` does.
 */
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreditMovement } from '../../src/accounts/credits.js';
import type { StatusFacts } from '../../src/admin/status-facts.js';
import { createLogger } from '../../src/common/log.js';
import { SqliteCreditLedger } from '../../src/store/sqlite/credit-ledger.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';
import { until } from '../e2e/e2e-setup.js';
import { scrape, startAdminFixture, type AdminFixture } from './admin-fixture.js';

const THRESHOLD = 1_000;
const CLIENT = 'acme <b>&co';
const METRIC = `smsgate_client_credits_available{client="${CLIENT}"}`;

let fixture: AdminFixture;
let browser: Browser;
let page: Page;
/** A second connection to the gateway's database: the operator's commands. */
let operator: Store;
let ledger: SqliteCreditLedger;
let clientId: number;
const logs: Record<string, unknown>[] = [];

beforeAll(async () => {
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  fixture = await startAdminFixture('creditsview', { logger: createLogger({ level: 'info', destination }), lowCreditsThreshold: THRESHOLD });
  operator = await openStore({ path: fixture.config.database.path, synchronous: 'NORMAL' }, { migrate: false });
  ledger = new SqliteCreditLedger(operator.db);
  const auth = sqliteStorePorts(operator).auth;
  clientId = (await auth.clientByName(CLIENT))!.id;
  await auth.insertClient({ name: 'freeco', webhookUrl: null, webhookSecretEnc: null }, Date.now());
  operator.db.prepare('INSERT INTO client_send_rates (client_id, parts_per_second, updated_at) VALUES (?, 50, ?)').run(clientId, Date.now());
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await operator?.close();
  await fixture?.stop();
});

function move(credits: number, kind: CreditMovement['kind'] = credits > 0 ? 'top-up' : 'correction'): void {
  operator.db.transaction(() => ledger.apply([{ clientId, kind, credits, campaignId: kind === 'reserve' ? 'c-test' : null, note: 'test' }], Date.now())).immediate();
}

async function statusJson(): Promise<StatusFacts> {
  const response = await fetch(`${fixture.adminUrl}/status.json`);
  return (await response.json()) as StatusFacts;
}

/** Loads /status, retried when the page's own refresh interrupts the navigation. */
async function loadStatus(): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await page.goto(`${fixture.adminUrl}/status`);
      return;
    } catch (err) {
      if (!(err instanceof Error && /interrupted by another navigation/.test(err.message)) || Date.now() > deadline) throw err;
    }
  }
}

const lowWarnings = (): Record<string, unknown>[] => logs.filter((l) => l['level'] === 40 && l['client'] === CLIENT && l['lowThreshold'] === THRESHOLD);
const backLines = (): Record<string, unknown>[] => logs.filter((l) => l['level'] === 30 && l['client'] === CLIENT && l['lowThreshold'] === THRESHOLD);

describe('a client\'s credits on a running gateway', () => {
  it('has no credits series while every client is unlimited, and shows them unlimited', async () => {
    const { series, text } = await scrape(fixture.adminUrl);
    expect([...series.keys()].filter((k) => k.startsWith('smsgate_client_credits_available'))).toEqual([]);
    expect(text).toContain('# TYPE smsgate_client_credits_available gauge');
    const facts = await statusJson();
    expect(facts.credits).toEqual({
      lowThreshold: THRESHOLD,
      clients: [
        { client: CLIENT, unlimited: true, balance: 0, reserved: 0, available: 0, partsPerSecond: 50, low: false },
        { client: 'freeco', unlimited: true, balance: 0, reserved: 0, available: 0, partsPerSecond: null, low: false },
      ],
    });
  });

  it('shows a balance of 10,000 with 300 reserved on /metrics, /status.json and the page, the rate beside it', async () => {
    move(10_000);
    move(300, 'reserve');
    const { series, text } = await until(() => scrape(fixture.adminUrl), (m) => m.series.get(METRIC) === 9_700, 5_000, 'the available credits scraped');
    // The unlimited client has no series.
    expect([...series.keys()].filter((k) => k.startsWith('smsgate_client_credits_available'))).toEqual([METRIC]);
    const promtool = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${promtool.stdout}${promtool.stderr}`).toBe('');
    expect((await statusJson()).credits.clients[0]).toEqual({ client: CLIENT, unlimited: false, balance: 10_000, reserved: 300, available: 9_700, partsPerSecond: 50, low: false });

    await loadStatus();
    const row = page.locator(`#credits tr[data-credits-client="${CLIENT}"]`);
    expect(await row.locator('td').first().textContent()).toBe(CLIENT);
    expect(await page.locator('#credits b').count()).toBe(0);
    expect(await row.locator('.balance').textContent()).toBe('10000');
    expect(await row.locator('.reserved').textContent()).toBe('300');
    expect(await row.locator('.available').textContent()).toBe('9700');
    expect(await row.locator('.send-rate').textContent()).toBe('50 parts/s');
    expect(await row.locator('.low-credits').count()).toBe(0);
    const free = page.locator('#credits tr[data-credits-client="freeco"]');
    expect(await free.locator('.balance').textContent()).toBe('unlimited');
    expect(await free.locator('.send-rate').textContent()).toBe('no cap');
  });

  it('logs once when available falls below credits.lowThreshold, marks the client low, and again only after it was back', async () => {
    expect(lowWarnings()).toEqual([]);
    // 9,700 - 9,000 = 700 available: below 1,000.
    move(-9_000);
    await until(() => lowWarnings().length, (n) => n >= 1, 15_000, 'the low-credits warning');
    expect(lowWarnings()[0]).toMatchObject({ client: CLIENT, available: 700, msg: `client ${CLIENT} has 700 credits available, below credits.lowThreshold 1000` });
    expect((await statusJson()).credits.clients[0]).toMatchObject({ available: 700, low: true });
    await loadStatus();
    const row = page.locator(`#credits tr[data-credits-client="${CLIENT}"]`);
    expect(await row.locator('.low-credits').textContent()).toBe('low');
    expect(await row.locator('.low-credits').isVisible()).toBe(true);
    expect(await page.locator('#credits tr[data-credits-client="freeco"] .low-credits').count()).toBe(0);

    // Lower still: no second warning. Then back to the threshold exactly: one info line, which
    // also proves the check ran after the second drop.
    move(-200);
    await until(() => scrape(fixture.adminUrl), (m) => m.series.get(METRIC) === 500, 5_000, 'the lower figure scraped');
    move(500);
    await until(() => backLines().length, (n) => n >= 1, 15_000, 'the back-above-threshold line');
    expect(backLines()[0]).toMatchObject({ client: CLIENT, available: 1_000 });
    expect(lowWarnings()).toHaveLength(1);
    await loadStatus();
    expect(await row.locator('.low-credits').count()).toBe(0);

    // Below again: a second warning.
    move(-1);
    await until(() => lowWarnings().length, (n) => n >= 2, 15_000, 'the second low-credits warning');
    expect(lowWarnings()[1]).toMatchObject({ client: CLIENT, available: 999 });
    expect(backLines()).toHaveLength(1);
  });
});
