/**
 * A campaign's outcome breakdown, end to end on a real gateway (SQLite file, the simulator with a
 * table of outcomes): /status.json, the status page and `smsgate campaign show` (text and --json)
 * give the same breakdown once the campaign has finished (delivered; undelivered by receipt status;
 * rejected by submit code; pending), and the transport's part counts tell throttled parts apart.
 * The client's webhook URL is a closed port: its breaker opens, and the status page gives the
 * cause (ECONNREFUSED), not the CIRCUIT_OPEN the fast-failed retries record.
 */
import { rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutcomeBreakdown } from '../../src/admin/campaign-outcomes.js';
import type { StatusFacts } from '../../src/admin/status-facts.js';
import { run as campaignCommand } from '../../src/cli/commands/campaign.js';
import { createGateway, type Gateway } from '../../src/index.js';
import { captureCliOutput } from '../support/cli-output.js';
import { seedAccount, writeGatewayConfig, type SeededAccount } from '../support/gateway-process.js';
import { baseUrlOf, gatewayConfig, postCampaign, tempDir, until } from '../e2e/e2e-setup.js';
import { msisdns } from './admin-fixture.js';

/** Ten recipients per last digit: 6 and 9 fail by receipt, 5 and 8 are refused at submit, 7 is throttled once. */
const OUTCOMES = [
  { suffix: '9', status: 'UNDELIV', kind: 'receipt' },
  { suffix: '6', status: 'EXPIRED', kind: 'receipt' },
  { suffix: '8', status: 'REJECTD', kind: 'reject' },
  { suffix: '5', status: 'ESME_RINVDSTADR', kind: 'reject' },
  { suffix: '7', status: 'ESME_RTHROTTLED', kind: 'temporary', failures: 1 },
];

const EXPECTED: OutcomeBreakdown = {
  delivered: 60,
  undelivered: { total: 20, byStatus: [{ name: 'EXPIRED', recipients: 10 }, { name: 'UNDELIV', recipients: 10 }] },
  rejected: { total: 20, byCode: [{ name: 'ESME_RINVDSTADR', recipients: 10 }, { name: 'REJECTD', recipients: 10 }] },
  pending: 0,
};

describe('the outcome breakdown of a finished campaign', () => {
  const dir = tempDir('outcomes');
  let gateway: Gateway;
  let account: SeededAccount;
  let configPath: string;
  let adminUrl: string;
  let campaignId: string;

  beforeAll(async () => {
    const raw = {
      ...gatewayConfig(dir, { host: '127.0.0.1', port: 9 }),
      logging: { level: 'silent' },
      transports: [{ name: 'sim', type: 'simulator', receiptDelayMs: 20, outcomes: OUTCOMES }],
      routes: [{ prefix: '', transport: 'sim' }],
      admin: { host: '127.0.0.1', port: 0 },
    };
    const written = writeGatewayConfig(dir, raw);
    configPath = written.path;
    // A port nothing listens on: every webhook attempt is refused.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    account = await seedAccount(written.config, { clientName: 'acme', webhookUrl: `http://127.0.0.1:${closedPort}/hook`, senders: [{ name: 'ACME', type: 0 }] });
    gateway = await createGateway(written.config);
    await gateway.start();
    const address = gateway.admin?.address();
    adminUrl = `http://${address?.host}:${address?.port}`;
    const posted = await postCampaign(baseUrlOf(gateway), account.token, {
      campaignName: 'Outcomes', text: 'Hello', from: 'ACME', recipientInfo: msisdns(100).map((msisdn) => ({ msisdn })),
    });
    expect(posted.status).toBe(202);
    campaignId = posted.id;
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is in /status.json, with the transport\'s parts counted as accepted, throttled and rejected', async () => {
    const facts = await until(
      async () => (await (await fetch(`${adminUrl}/status.json`)).json()) as StatusFacts,
      (f) => f.campaigns.some((c) => c.id === campaignId && c.finished),
      30_000,
      'the campaign finished',
    );
    const campaign = facts.campaigns.find((c) => c.id === campaignId);
    expect(campaign).toMatchObject({ name: 'Outcomes', client: 'acme', state: 'ready', total: 100, finished: true, delivered: 60, undelivered: 40, pending: 0 });
    expect(campaign?.outcomes).toEqual(EXPECTED);
    // 100 first submits and 10 second tries of the throttled ones: 80 accepted, 10 throttled, 20 refused for good.
    expect(facts.transports?.[0]?.parts).toEqual({ submitted: 110, accepted: 80, throttled: 10, rejected: 20, failed: 0 });
  });

  it('is on the status page', async () => {
    const page = await (await fetch(`${adminUrl}/status`)).text();
    const row = page.slice(page.indexOf(`data-campaign="${campaignId}"`));
    expect(row).toContain('<span class="rejected-figure">20</span> rejected<ul class="counts by-code"><li><span class="code">ESME_RINVDSTADR</span> 10</li><li><span class="code">REJECTD</span> 10</li></ul>');
    expect(row).toContain('<span class="undelivered-figure">20</span> undelivered<ul class="counts by-status"><li><span class="code">EXPIRED</span> 10</li>');
    expect(page).toMatch(/<td class="num throttled">10<\/td>/);
  });

  it('gives the webhook endpoint\'s breaker and its real last error, and names the client in recent errors', async () => {
    const facts = await until(
      async () => (await (await fetch(`${adminUrl}/status.json`)).json()) as StatusFacts,
      (f) => f.webhooks.clients[0]?.breaker === 'open' && f.webhooks.deadLetters > 0,
      30_000,
      'the breaker open and a dead letter',
    );
    expect(facts.webhooks.clients[0]).toMatchObject({ client: 'acme', breaker: 'open', lastError: 'ECONNREFUSED' });
    const page = await (await fetch(`${adminUrl}/status`)).text();
    const row = page.slice(page.indexOf('<tr data-client="acme">'), page.indexOf('</tr>', page.indexOf('<tr data-client="acme">')));
    expect(row).toContain('<span class="state state-breaker-open">breaker open</span>');
    expect(row).toMatch(/<td class="err last-error">ECONNREFUSED <span class="quiet"><time/);
    expect(row).not.toContain('CIRCUIT_OPEN');
    // While the breaker is open its dead letters are counted into the one "breaker opened" entry
    // (a line per event would fill the list): that entry names the client, never its id.
    const opened = facts.recentErrors?.find((e) => e.message.startsWith('webhook circuit breaker opened'));
    expect(opened?.context['client']).toBe('acme');
    expect(opened?.context['clientId']).toBeUndefined();
    expect(opened?.context['cause']).toBe('ECONNREFUSED');
  });

  it('is what smsgate campaign show prints, in text and --json', async () => {
    const json = await captureCliOutput(() => campaignCommand(['show', campaignId, '--config', configPath, '--json']));
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect((JSON.parse(json.stdout) as { outcomes: OutcomeBreakdown }).outcomes).toEqual(EXPECTED);
    const text = await captureCliOutput(() => campaignCommand(['show', campaignId, '--config', configPath]));
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('outcome: 60 delivered, 20 undelivered (EXPIRED 10, UNDELIV 10), 20 rejected (ESME_RINVDSTADR 10, REJECTD 10), 0 pending\n');
  });
});
