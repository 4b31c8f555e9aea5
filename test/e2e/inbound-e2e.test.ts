/**
 * Inbound SMS end to end with real peers: real `smsgate serve` children, the Perl
 * Net::SMPP SMSC sending MO parts, a webhook receiver that verifies X-Signature over the raw body,
 * and `smsgate simulate inbound` as a child process against a serve on the simulator.
 *  - kill -9 between the parts of a message: the stored part survives, the restarted serve joins
 *    it with the last part, and the receiver gets exactly one webhook with the whole text;
 *  - the simulator quickstart: route, inbound webhook, injection, webhook and GET /v1/inbound.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InboundAdmin } from '../../src/inbound/inbound-admin.js';
import { buildUdh, encodeGsm7Septets } from '../../src/sms/index.js';
import { concatIe } from '../../src/sms/udh.js';
import { openStore } from '../../src/store/sqlite/database.js';
import { GatewayProcess, REPO_ROOT, seedAccount, writeGatewayConfig } from '../support/gateway-process.js';
import { PerlSmsc } from '../support/perl-smsc/perl-smsc.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { readDatabase, tempDir, until } from './e2e-setup.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';

const SECRET = 'inbound-secret';
/** The built command GatewayProcess runs too (it builds dist/ first). */
const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
const UDHI = 0x40;

let dir: string | undefined;
let smsc: PerlSmsc | undefined;
let receiver: WebhookReceiver | undefined;
const gateways: GatewayProcess[] = [];

afterEach(async () => {
  for (const gateway of gateways.splice(0)) gateway.kill('SIGKILL');
  await receiver?.close();
  await smsc?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  receiver = undefined;
  smsc = undefined;
  dir = undefined;
});

function baseConfig(directory: string, transports: unknown[]): Record<string, unknown> {
  return {
    database: { path: join(directory, 'smsgate.sqlite') },
    api: { host: '127.0.0.1', port: 0 },
    logging: { level: 'info' },
    engine: { pollIntervalMs: 50, drainTimeoutMs: 2_000 },
    webhooks: { retryDelaysMs: [200, 400, 800] },
    transports,
  };
}

/** Client acme with a signed receipt webhook, an inbound webhook to the receiver, and a route for 50123. */
async function seedAcme(config: Parameters<typeof seedAccount>[0], inboundUrl: string): Promise<string> {
  const account = await seedAccount(config, { webhookUrl: `${inboundUrl}/receipts`, webhookSecret: SECRET });
  const store = await openStore({ path: config.database.path });
  try {
    const admin = new InboundAdmin(sqliteStorePorts(store).inbound);
    await admin.addRoute('acme', '50123');
    await admin.setInboundWebhook('acme', inboundUrl);
  } finally {
    await store.close();
  }
  return account.token;
}

interface InboundPage {
  messages: { id: string; from: string; to: string; text: string; receivedAt: string; incomplete: boolean }[];
  next: string | null;
}

async function listInbound(baseUrl: string, token: string): Promise<InboundPage> {
  const response = await fetch(`${baseUrl}/v1/inbound`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as InboundPage;
}

describe('inbound end to end', () => {
  it('kill -9 of smsgate serve between two parts loses nothing and sends one webhook', async () => {
    dir = tempDir('inbound-kill');
    smsc = await PerlSmsc.start({ receipt: 'none' });
    receiver = await WebhookReceiver.start({ secret: SECRET });
    const written = writeGatewayConfig(dir, baseConfig(dir, [
      { name: 'carrier', type: 'smpp', ...smsc.address, systemId: 'esme', password: 'secret', bindMode: 'transceiver', reconnect: { initialDelayMs: 100, maxDelayMs: 500 } },
    ]));
    const token = await seedAcme(written.config, receiver.url);
    const part = (sequence: number, text: string) => ({
      source_addr: '353861234567', destination_addr: '50123', esm_class: UDHI,
      short_message: Buffer.concat([Buffer.from(buildUdh([concatIe(0x5a, 2, sequence, 8)])), Buffer.from(encodeGsm7Septets(text))]).toString('hex'),
    });

    const first = await GatewayProcess.spawn(written.path);
    gateways.push(first);
    await smsc.waitFor('bind', 10_000, 1);
    await smsc.deliverMo(part(2, 'after the crash.'));
    const [ack] = await smsc.waitFor('deliver_sm_resp', 10_000, 1);
    expect(ack?.['status']).toBe(0);
    first.kill('SIGKILL');
    expect((await first.waitForExit()).signal).toBe('SIGKILL');
    expect(readDatabase(written.config.database.path, (db) => db.prepare('SELECT sequence FROM inbound_parts').pluck().all())).toEqual([2]);

    const second = await GatewayProcess.spawn(written.path);
    gateways.push(second);
    await smsc.waitFor('bind', 10_000, 2);
    await smsc.deliverMo(part(1, 'Written before and '));
    await receiver.waitForCount(1, 15_000);
    const outboxState = () => readDatabase(written.config.database.path, (db) => db.prepare(`SELECT state FROM webhook_outbox WHERE kind = 'inbound'`).pluck().all());
    await until(outboxState, (states) => states.length === 1 && states[0] === 'delivered', 10_000, 'the inbound event delivered');
    expect(receiver.count).toBe(1);
    const [request] = receiver.requests;
    expect(request?.signatureOk).toBe(true);
    const body = JSON.parse(request?.rawBody.toString('utf8') ?? '{}') as Record<string, unknown>;
    expect(body).toEqual({ MessageId: expect.any(String), From: '353861234567', To: '50123', Text: 'Written before and after the crash.', ReceivedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/) });
    const page = await listInbound(second.baseUrl, token);
    expect(page.messages).toEqual([{ id: body['MessageId'], from: '353861234567', to: '50123', text: 'Written before and after the crash.', receivedAt: body['ReceivedAt'], incomplete: false }]);
    expect(await second.stop()).toBe(0);
  }, 90_000);

  it('smsgate simulate inbound against a running serve on the simulator reaches the webhook and GET /v1/inbound', async () => {
    dir = tempDir('inbound-sim');
    receiver = await WebhookReceiver.start({ secret: SECRET });
    const written = writeGatewayConfig(dir, baseConfig(dir, [{ name: 'sim', type: 'simulator' }]));
    const token = await seedAcme(written.config, receiver.url);
    const gateway = await GatewayProcess.spawn(written.path);
    gateways.push(gateway);
    // 219 UTF-16 units: 4 UCS-2 parts of 67, the emoji's surrogate pair cut between parts 1 and 2.
    const text = `${'a'.repeat(66)}\u{1F600} ${'b'.repeat(150)}`;
    const simulate = spawnSync(process.execPath, [CLI, 'simulate', 'inbound', '--from', '+353861234567', '--to', '50123', '--text', text, '--config', written.path, '--json'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(simulate.stderr).toBe('');
    expect(simulate.status).toBe(0);
    const injected = JSON.parse(simulate.stdout) as { messageId: string; parts: number; client: string };
    expect(injected).toMatchObject({ transport: 'sim', parts: 4, client: 'acme' });
    await receiver.waitForCount(1, 15_000);
    const body = JSON.parse(receiver.requests[0]?.rawBody.toString('utf8') ?? '{}') as Record<string, unknown>;
    expect(body).toMatchObject({ MessageId: injected.messageId, From: '353861234567', To: '50123', Text: text });
    expect(receiver.requests[0]?.signatureOk).toBe(true);
    const page = await listInbound(gateway.baseUrl, token);
    expect(page.messages.map((m) => m.text)).toEqual([text]);
    const unrouted = spawnSync(process.execPath, [CLI, 'simulate', 'inbound', '--from', '0861234567', '--to', '50999', '--text', 'hello?', '--config', written.path], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(unrouted.stdout).toMatch(/^message [0-9a-f-]{36} stored unrouted \(no route for 50999\)\n$/);
    expect((await listInbound(gateway.baseUrl, token)).messages).toHaveLength(1);
    expect(await gateway.stop()).toBe(0);
    expect(receiver.count).toBe(1);
  }, 90_000);
});
