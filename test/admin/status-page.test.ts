/**
 * The /status page in headless Chromium while a campaign runs over a real SMPP bind: what a person
 * sees (the bind and its state, a progress figure that moves between two loads, webhooks per client
 * with escaped names), the replay button re-queueing dead letters, a cross-site POST refused, and a
 * populated page (readiness banner, version and uptime, part counts per transport, a finished
 * campaign's outcome breakdown, the webhook breaker and last error). The screenshots go to a temp
 * dir; with SMSGATE_UPDATE_SCREENSHOT=1 the populated one also replaces docs/images/status-page.png,
 * the one the README shows.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/gateway-process.js';
import { until } from '../e2e/e2e-setup.js';
import { msisdns, sendCampaign, startAdminFixture, type AdminFixture } from './admin-fixture.js';

const RECIPIENTS = 400;
let fixture: AdminFixture;
let browser: Browser;
let page: Page;
/** The replay form's token, as a page of the admin listener carried it. */
let csrfToken: string | null = null;

beforeAll(async () => {
  // 40 parts/s: the campaign lasts about ten seconds, so two loads see it move.
  fixture = await startAdminFixture('statuspage', { maxPerSecond: 40, simulator: true });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await fixture?.stop();
});

/**
 * Loads /status. The page's own refresh (meta refresh, every 5 s) may start a navigation while
 * goto waits on a loaded machine: goto is then retried, within a deadline.
 */
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

/** The "N / M sent" figure of the campaign's row, as the page shows it. */
async function sentFigure(id: string): Promise<number> {
  await loadStatus();
  const text = (await page.locator(`tr[data-campaign="${id}"] .sent-figure`).textContent()) ?? '';
  const match = /^(\d+) \/ (\d+) sent$/.exec(text.trim());
  if (match === null) throw new Error(`no sent figure in "${text}"`);
  return Number(match[1]);
}

describe('/status in Chromium during a campaign', () => {
  let campaignId: string;

  it('shows the bind bound and a campaign whose progress moves between two loads', async () => {
    campaignId = await sendCampaign(fixture, msisdns(RECIPIENTS), 'Spring <sale>');
    const first = await until(() => sentFigure(campaignId), (n) => n > 0 && n < RECIPIENTS, 20_000, 'the campaign under way');
    const bind = page.locator('tr[data-transport="carrier"][data-bind="0"]');
    await expect(bind.locator('.state').textContent()).resolves.toBe('bound');
    expect(await bind.locator('td').nth(1).textContent()).toBe('smpp');
    // The name came from an API caller: shown as text, never as markup.
    expect(await page.locator(`tr[data-campaign="${campaignId}"]`).textContent()).toContain('Spring <sale>');
    expect(await page.locator('tr[data-campaign] sale').count()).toBe(0);
    const later = await until(() => sentFigure(campaignId), (n) => n > first, 20_000, 'a larger sent figure on a later load');
    expect(later).toBeGreaterThan(first);

    const shot = join(fixture.dir, 'status-page.png');
    await page.screenshot({ path: shot, fullPage: true });
    // A PNG signature, and more than an empty page's worth of pixels.
    const png = readFileSync(shot);
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(png.length).toBeGreaterThan(20_000);
  });

  it('refreshes itself', async () => {
    const refresh = await page.locator('meta[http-equiv="refresh"]').getAttribute('content');
    expect(refresh).toBe('5; url=/status');
  });

  it('shows webhooks per client with the name escaped, and the replay button re-queues its dead letters', async () => {
    const dead = msisdns(RECIPIENTS).filter((m) => m.endsWith('8')).length;
    await until(async () => {
      await loadStatus();
      return page.locator('#dead-letters').textContent();
    }, (text) => text === String(dead), 30_000, `${dead} dead letters on the page`);
    const row = page.locator('#webhooks tbody tr');
    expect(await row.locator('td').first().textContent()).toBe('acme <b>&co');
    expect(await page.locator('#webhooks b').count()).toBe(0);
    expect(await row.locator('td').nth(2).textContent()).toBe(String(dead));

    // The endpoint works again: the replayed events are delivered.
    fixture.receiver.respondWith(undefined);
    csrfToken = await row.locator('input[name="csrf"]').getAttribute('value');
    await row.getByRole('button', { name: `Replay ${dead} dead letters` }).click();
    await page.waitForURL(/\/status\?notice=/);
    expect(await page.locator('.notice').textContent()).toBe(`Re-queued ${dead} dead letter(s) of client acme <b>&co.`);
    // Only the replays can answer 200 for these recipients: their first attempts got 400.
    const replayedOk = (): number =>
      fixture.receiver.requests.filter((r) => {
        const to = (JSON.parse(r.rawBody.toString('utf8')) as { To?: string }).To ?? '';
        return to.endsWith('8') && r.response.kind === 'status' && r.response.statusCode === 200;
      }).length;
    await fixture.receiver.waitUntil(() => replayedOk() >= dead, 20_000, 'the replayed webhooks delivered');
    expect(replayedOk()).toBe(dead);
    // The notice is shown once, and a crafted link cannot make one up.
    await page.reload();
    expect(await page.locator('.notice').count()).toBe(0);
    await page.goto(`${fixture.adminUrl}/status?notice=made-up&replayed=1000&client=x`);
    expect(await page.locator('.notice').count()).toBe(0);
    await until(async () => {
      await loadStatus();
      return page.locator('#dead-letters').textContent();
    }, (text) => text === '0', 10_000, 'no dead letter left');
  });

  it('refuses a replay posted from another site, even with the right form token', async () => {
    expect(csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // A page of another site (http://localhost:<api port> is not http://127.0.0.1:<admin port>)
    // submitting a form to the admin listener, with the right token even.
    await page.goto(`${fixture.apiUrl.replace('127.0.0.1', 'localhost')}/health`);
    await page.setContent(
      `<form id="f" method="post" action="${fixture.adminUrl}/status/replay"><input name="csrf" value="${csrfToken ?? ''}"><input name="client" value="acme &lt;b&gt;&amp;co"></form>`,
    );
    const [response] = await Promise.all([page.waitForResponse(`${fixture.adminUrl}/status/replay`), page.locator('#f').evaluate((f: HTMLFormElement) => f.submit())]);
    expect(response.status()).toBe(403);
    expect(await response.text()).toContain('cross-site request refused');

    // Same origin but without the page's token: refused as well.
    const forged = await fetch(`${fixture.adminUrl}/status/replay`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client: 'acme <b>&co', csrf: 'guess' }).toString(),
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain('csrf');
  });

  it('shows a populated page: readiness, version, part counts, a finished campaign\'s outcome and the webhook breaker', async () => {
    // To the simulator (routed 44...): 9 UNDELIV, 8 rejected REJECTD, 7 throttled once. The name is markup, shown as text.
    const finished = await sendCampaign(fixture, msisdns(40, '4477009'), '<img src=x onerror=alert(1)>');
    await until(async () => {
      await loadStatus();
      return page.locator(`tr[data-campaign="${finished}"]`).getAttribute('class');
    }, (c) => c === 'campaign finished', 20_000, 'the simulator campaign finished');
    const inProgress = await sendCampaign(fixture, msisdns(RECIPIENTS, '3538713'), 'Autumn reminder');
    await until(() => sentFigure(inProgress), (n) => n > 0 && n < RECIPIENTS, 20_000, 'the carrier campaign under way');

    expect(await page.locator('#readiness strong').textContent()).toBe('Ready');
    expect(await page.locator('#version').textContent()).toMatch(/^\d+\.\d+\.\d+/);
    expect(await page.locator('#uptime').textContent()).toMatch(/^\d+ (s|min)/);
    const row = page.locator(`tr[data-campaign="${finished}"]`);
    expect(await row.textContent()).toContain('<img src=x onerror=alert(1)>');
    expect(await page.locator('tr[data-campaign] img').count()).toBe(0);
    expect(await row.locator('.delivered-figure').textContent()).toBe('32');
    expect(await row.locator('.undelivered-figure').textContent()).toBe('4');
    expect(await row.locator('.by-status').textContent()).toBe('UNDELIV 4');
    expect(await row.locator('.rejected-figure').textContent()).toBe('4');
    expect(await row.locator('.by-code').textContent()).toBe('REJECTD 4');
    const sim = page.locator('tr[data-transport-summary="sim"]');
    expect(await sim.locator('.throttled').textContent()).toBe('4');
    expect(await sim.locator('.rejected').textContent()).toBe('4');
    expect(await page.locator('tr[data-client="acme <b>&co"] .breaker').textContent()).toBe('breaker closed');
    expect(await page.locator('tr[data-client="acme <b>&co"] .last-error').textContent()).toMatch(/^HTTP_400 /);

    const shot = join(fixture.dir, 'status-page-populated.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(readFileSync(shot).subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    if (process.env['SMSGATE_UPDATE_SCREENSHOT'] === '1') {
      mkdirSync(join(REPO_ROOT, 'docs', 'images'), { recursive: true });
      copyFileSync(shot, join(REPO_ROOT, 'docs', 'images', 'status-page.png'));
    }
  });
});
