/**
 * `smsgate status [--config FILE] [--json]`: the /status.json facts from a running
 * `smsgate serve` child's admin listener, and what the database alone tells when none answers
 * (said so).
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusFacts } from '../../src/admin/status-facts.js';
import { run } from '../../src/cli/commands/status.js';
import { captureCliOutput } from '../support/cli-output.js';
import { GatewayProcess, seedAccount, writeGatewayConfig, type SeededAccount } from '../support/gateway-process.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { gatewayConfig, getSummary, postCampaign, tempDir, until } from '../e2e/e2e-setup.js';
import { freePort } from '../support/free-port.js';
import type { SmsGateConfig } from '../../src/gateway/config.js';
import { SqliteCreditLedger } from '../../src/store/sqlite/credit-ledger.js';
import { openStore } from '../../src/store/sqlite/database.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';


const TOKEN = 'status-cli-admin-token';
let dir: string;
let smsc: ReceiptingSmsc;
let gateway: GatewayProcess | undefined;
let configPath: string;
let account: SeededAccount;

beforeAll(async () => {
  dir = tempDir('statuscli');
  smsc = await ReceiptingSmsc.start();
  // info: GatewayProcess finds the API by its "listening on" line.
  const raw = { ...gatewayConfig(dir, smsc.address, { maxPerSecond: 50 }), admin: { host: '127.0.0.1', port: await freePort(), token: TOKEN } };
  const written = writeGatewayConfig(dir, raw);
  configPath = written.path;
  account = await seedAccount(written.config, { clientName: 'statusco', webhookUrl: 'http://127.0.0.1:9/none', senders: [{ name: 'Status', type: 0 }] });
  await givePaidClient(written.config);
  gateway = await GatewayProcess.spawn(configPath);
}, 60_000);

/**
 * A second client, 'paidco', with 5,000 credits of which 120 are reserved and a cap of 20 parts a
 * second, written as `smsgate credits` and `smsgate client set-rate` write them; it sends nothing,
 * so its figures stay put while statusco's campaign runs.
 */
async function givePaidClient(config: SmsGateConfig): Promise<void> {
  await seedAccount(config, { clientName: 'paidco' });
  const store = await openStore({ path: config.database.path, synchronous: 'NORMAL' });
  try {
    const clientId = (await sqliteStorePorts(store).auth.clientByName('paidco'))!.id;
    const ledger = new SqliteCreditLedger(store.db);
    store.db.transaction(() => ledger.apply([
      { clientId, kind: 'top-up', credits: 5_000, campaignId: null, note: 'first order' },
      { clientId, kind: 'reserve', credits: 120, campaignId: 'c-paid', note: null },
    ], Date.now())).immediate();
    store.db.prepare('INSERT INTO client_send_rates (client_id, parts_per_second, updated_at) VALUES (?, 20, ?)').run(clientId, Date.now());
  } finally {
    await store.close();
  }
}

const PAIDCO = { client: 'paidco', unlimited: false, balance: 5_000, reserved: 120, available: 4_880, partsPerSecond: 20, low: false };

afterAll(async () => {
  await gateway?.stop();
  await smsc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('smsgate status', () => {
  let campaignId: string;

  it('prints the running serve\'s facts with --json, bearer token from the config', async () => {
    const recipients = Array.from({ length: 200 }, (_, i) => `3538713${String(i).padStart(4, '0')}`);
    const posted = await postCampaign(gateway!.baseUrl, account.token, { text: 'Status', from: 'Status', campaignName: 'CLI run', recipientInfo: recipients.map((msisdn) => ({ msisdn })) });
    campaignId = posted.id;
    const result = await until(
      () => captureCliOutput(() => run(['--config', configPath, '--json'])),
      (r) => r.code === 0 && ((JSON.parse(r.stdout) as StatusFacts).campaigns[0]?.sent ?? 0) > 0,
      20_000,
      'the campaign under way in smsgate status',
    );
    const facts = JSON.parse(result.stdout) as StatusFacts & { note?: string };
    expect(facts.source).toBe('serve');
    expect(facts.note).toBeUndefined();
    expect(facts.transports?.[0]).toMatchObject({ name: 'carrier', type: 'smpp', state: 'bound', links: [{ name: '0', state: 'bound' }] });
    expect(facts.campaigns[0]).toMatchObject({ id: campaignId, name: 'CLI run', client: 'statusco', total: 200 });
    expect(facts.recentErrors).toEqual(expect.any(Array));
    expect(facts.credits.lowThreshold).toBeNull();
    expect(facts.credits.clients.find((c) => c.client === 'paidco')).toEqual(PAIDCO);
    expect(facts.credits.clients.find((c) => c.client === 'statusco')).toMatchObject({ unlimited: true, partsPerSecond: null, low: false });
  });

  it('prints text by default', async () => {
    const result = await captureCliOutput(() => run(['--config', configPath]));
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^smsgate status at \S+ \(from the running serve\)\n/);
    expect(result.stdout).toMatch(/\n {2}carrier \(smpp\) bound since \S+: 1\/1 binds bound; /);
    expect(result.stdout).toMatch(/\n {4}0: bound since \S+; window \d+\/10\n/);
    expect(result.stdout).toMatch(/\nsmsgate \d+\.\d+\.\d+\S*, up \d+ s \(since \S+\)\nready\n/);
    expect(result.stdout).toMatch(/\n {4}parts since start: \d+ submitted, \d+ accepted, 0 throttled, 0 rejected, 0 failed\n/);
    expect(result.stdout).toMatch(new RegExp(`\\n  ${campaignId} "CLI run" \\(client statusco, ready(, finished)?\\): \\d+/200 sent; \\d+ delivered, 0 undelivered, 0 rejected, \\d+ pending\\n`));
    expect(result.stdout).toContain('\ncredits (balance / reserved / available; send rate):\n');
    expect(result.stdout).toContain('\n  paidco: 5000 / 120 / 4880; 20 parts/s\n');
  });

  it('falls back to the database when serve is not answering, and says so', async () => {
    await until(() => getSummary(gateway!.baseUrl, account.token, campaignId), (s) => s?.pending === 0, 30_000, 'the campaign done');
    expect(await gateway?.stop()).toBe(0);
    gateway = undefined;
    const result = await captureCliOutput(() => run(['--config', configPath, '--json']));
    expect(result.code).toBe(0);
    const facts = JSON.parse(result.stdout) as StatusFacts & { note: string };
    expect(facts.source).toBe('database');
    expect(facts.transports).toBeNull();
    expect(facts.recentErrors).toBeNull();
    expect(facts.note).toMatch(/^smsgate serve is not answering \(http:\/\/127\.0\.0\.1:\d+\/status\.json: ECONNREFUSED\): this is what the database alone tells/);
    expect(facts.queues).toEqual([{ transport: 'carrier', queued: 0, submitting: 0 }]);
    expect(facts.webhooks.clients).toEqual([expect.objectContaining({ client: 'statusco', hasWebhook: true })]);
    // Credits live in the database: known without serve.
    expect(facts.credits.clients.find((c) => c.client === 'paidco')).toEqual(PAIDCO);
    const text = await captureCliOutput(() => run(['--config', configPath]));
    expect(text.stdout).toContain('(from the database only)');
    expect(text.stdout).toContain('note: smsgate serve is not answering');
    expect(text.stdout).toContain('transports:\n  unknown (serve not answering)');
    // Finished campaigns and their outcome come from the database alone too.
    expect(facts.campaigns[0]).toMatchObject({ id: campaignId, finished: true, outcomes: { delivered: 200, undelivered: { total: 0, byStatus: [] }, rejected: { total: 0, byCode: [] }, pending: 0 } });
    expect(text.stdout).toContain(`${campaignId} "CLI run" (client statusco, ready, finished): 200/200 sent; 200 delivered, 0 undelivered, 0 rejected, 0 pending`);
  });

  it('is a usage error with the usage line for a stray argument or option, exit 2', async () => {
    for (const args of [['extra'], ['--verbose']]) {
      const result = await captureCliOutput(() => run(args));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('usage: smsgate status [--config FILE] [--json]');
    }
    const help = await captureCliOutput(() => run(['--help']));
    expect(help.code).toBe(0);
    expect(help.stdout).toBe('usage: smsgate status [--config FILE] [--json]\n');
  });

  it('names the file and key of a bad config, exit 1', async () => {
    const result = await captureCliOutput(() => run(['--config', `${dir}/missing.json`]));
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`smsgate: ${dir}/missing.json: file not found\n`);
  });
});
