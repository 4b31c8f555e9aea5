/**
 * The inbound side follows `numbering.country`: under US,
 * `smsgate optout add|remove --msisdn`, `smsgate inbound route add|remove --to`, `smsgate simulate
 * inbound` and a running gateway's InboundService (a real createGateway bound to the Perl Net::SMPP
 * SMSC) normalise a national 2125550123 to 12125550123, the form the campaign processor compares.
 * So an opt-out typed the national way suppresses a campaign recipient typed the national way, and
 * a route typed the national way owns a message sent to +12125550123. The default (IE) behaviour is
 * covered unchanged by optout.test.ts and routes-cli.test.ts.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as inboundCommand } from '../../src/cli/commands/inbound.js';
import { run as optoutCommand } from '../../src/cli/commands/optout.js';
import { run as simulateCommand } from '../../src/cli/commands/simulate.js';
import { createGateway, type Gateway } from '../../src/index.js';
import { encodeGsm7Septets } from '../../src/sms/index.js';
import { baseUrlOf, gatewayConfig, getSummary, postCampaign, readDatabase, tempDir, until, type Summary } from '../e2e/e2e-setup.js';
import { captureCliOutput, type CliResult } from '../support/cli-output.js';
import { seedAccount, writeGatewayConfig, type SeededAccount } from '../support/gateway-process.js';
import { PerlSmsc } from '../support/perl-smsc/perl-smsc.js';

const dir = tempDir('numbering-inbound');
let configPath: string;
let smsc: PerlSmsc | undefined;
let gateway: Gateway | undefined;
let account: SeededAccount;
let apiUrl: string;

function cli(run: (args: string[]) => Promise<number>, ...args: string[]): Promise<CliResult> {
  return captureCliOutput(() => run([...args, '--config', configPath]));
}

interface StoredMessage {
  sender: string;
  recipient: string;
  text: string;
  client: string | null;
}

function storedInbound(): StoredMessage[] {
  return readDatabase(`${dir}/smsgate.sqlite`, (db) => db.prepare(
    'SELECT m.sender, m.recipient, m.text, c.name AS client FROM inbound_messages m LEFT JOIN clients c ON c.id = m.client_id ORDER BY m.id',
  ).all() as StoredMessage[]);
}

beforeAll(async () => {
  smsc = await PerlSmsc.start({ receipt: 'none' });
  const base = gatewayConfig(dir, smsc.address);
  const raw = {
    ...base,
    logging: { level: 'silent' },
    transports: [...(base['transports'] as unknown[]), { name: 'sim', type: 'simulator' }],
    numbering: { country: 'US' },
  };
  const written = writeGatewayConfig(dir, raw);
  configPath = written.path;
  account = await seedAccount(written.config, { clientName: 'acme', senders: [{ name: 'ACME', type: 0 }] });
  gateway = await createGateway(written.config);
  await gateway.start();
  apiUrl = baseUrlOf(gateway);
  await until(() => gateway?.transports.find((t) => t.name === 'carrier')?.currentState().state, (state) => state === 'bound', 10_000, 'the bind to the Perl SMSC');
}, 30_000);

afterAll(async () => {
  try {
    await gateway?.stop();
  } finally {
    await smsc?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('numbering.country US on the inbound side', () => {
  it('optout add --msisdn 2125550123 stores 12125550123, and a campaign to 2125550123 skips it', async () => {
    const added = await cli(optoutCommand, 'add', '--client', 'acme', '--msisdn', '2125550123', '--json');
    expect(added.stderr).toBe('');
    expect(JSON.parse(added.stdout)).toEqual({ client: 'acme', msisdn: '12125550123', added: true });
    // The API form with the country code is the same number: already on the list.
    expect(JSON.parse((await cli(optoutCommand, 'add', '--client', 'acme', '--msisdn', '+12125550123', '--json')).stdout)).toMatchObject({ added: false });

    const { status, id } = await postCampaign(apiUrl, account.token, { text: 'Sale today', from: 'ACME', recipientInfo: [{ msisdn: '2125550123' }, { msisdn: '2125550199' }] });
    expect(status).toBe(202);
    const summary = await until<Summary | undefined>(() => getSummary(apiUrl, account.token, id), (s) => s !== undefined, 10_000, 'the campaign summary');
    expect(summary?.totalSent).toBe(1);
    const recipients = readDatabase(`${dir}/smsgate.sqlite`, (db) => db.prepare('SELECT msisdn FROM recipients WHERE campaign_id = ?').pluck().all(id));
    expect(recipients).toEqual(['12125550199']);
    const submits = await (smsc as PerlSmsc).waitForSubmits(1);
    expect(submits.map((s) => s.destination_addr)).toEqual(['12125550199']);
  });

  it('optout remove --msisdn 2125550123 removes the 12125550123 that add stored', async () => {
    expect(JSON.parse((await cli(optoutCommand, 'remove', '--client', 'acme', '--msisdn', '2125550123', '--json')).stdout)).toEqual({ client: 'acme', msisdn: '12125550123', removed: true });
    expect(JSON.parse((await cli(optoutCommand, 'list', '--client', 'acme', '--json')).stdout)).toMatchObject({ numbers: [] });
  });

  it('inbound route add --to 2125550123 owns MO sent to +12125550123 and to the national 2125550123 from a national sender', async () => {
    expect(await cli(inboundCommand, 'route', 'add', '--client', 'acme', '--to', '2125550123')).toEqual({ code: 0, stdout: 'messages to 12125550123 go to client acme\n', stderr: '' });
    const s = smsc as PerlSmsc;
    await s.deliverMo({ source_addr: '+12125550777', destination_addr: '+12125550123', short_message: Buffer.from(encodeGsm7Septets('first')).toString('hex') });
    await s.deliverMo({ source_addr: '2125550777', destination_addr: '2125550123', short_message: Buffer.from(encodeGsm7Septets('second')).toString('hex') });
    const stored = await until(storedInbound, (rows) => rows.length === 2, 10_000, 'two stored inbound messages');
    expect(stored).toEqual([
      { sender: '12125550777', recipient: '12125550123', text: 'first', client: 'acme' },
      { sender: '12125550777', recipient: '12125550123', text: 'second', client: 'acme' },
    ]);
  });

  it('simulate inbound --to 2125550123 under US reaches the routed client', async () => {
    const result = await cli(simulateCommand, 'inbound', '--from', '2125550888', '--to', '2125550123', '--text', 'third', '--json');
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toMatchObject({ transport: 'sim', parts: 1, client: 'acme' });
    expect(storedInbound()[2]).toEqual({ sender: '12125550888', recipient: '12125550123', text: 'third', client: 'acme' });
  });

  it('inbound route remove --to 2125550123 removes the 12125550123 route; a malformed --to is still a usage error (exit 2)', async () => {
    expect(await cli(inboundCommand, 'route', 'remove', '--to', '2125550123')).toEqual({ code: 0, stdout: 'removed the route of 12125550123 (client acme)\n', stderr: '' });
    expect(JSON.parse((await cli(inboundCommand, 'route', 'list', '--json')).stdout)).toEqual([]);
    const bad = await cli(inboundCommand, 'route', 'add', '--client', 'acme', '--to', '212-555');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('usage: smsgate inbound route add --client NAME --to NUMBER');
  });
});
