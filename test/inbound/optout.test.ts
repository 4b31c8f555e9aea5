/**
 * Opt-out keywords (off unless set) put the sender on the client's suppression list, and a
 * later campaign of that client skips the number during processing (not counted in totalSent);
 * `smsgate client set-optout` and `smsgate optout list|add|remove` on the same real SQLite file.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { run as clientCommand } from '../../src/cli/commands/client.js';
import { run as optoutCommand } from '../../src/cli/commands/optout.js';
import { InboundAdmin } from '../../src/inbound/inbound-admin.js';
import { InboundService } from '../../src/inbound/inbound-service.js';
import { silentLogger } from '../../src/common/log.js';
import { startApiFixture, type Account, type ApiFixture } from '../support/api-fixture.js';
import { captureCliOutput, type CliResult } from '../support/cli-output.js';

let api: ApiFixture;
let acme: Account;
let configPath: string;
let service: InboundService;

beforeAll(async () => {
  api = await startApiFixture();
  acme = await api.createAccount({ clientName: 'acme', senders: [{ name: 'ACME', type: 0 }] });
  await api.createAccount({ clientName: 'globex' });
  configPath = join(api.dir, 'config.json');
  writeFileSync(configPath, JSON.stringify({ database: { path: api.dbPath } }));
  const admin = new InboundAdmin(api.ports.inbound);
  await admin.addRoute('acme', '50123');
  await admin.addRoute('globex', '50999');
  service = new InboundService({ store: api.ports.inbound, logger: silentLogger(), wakeWebhooks: () => undefined });
});
afterAll(async () => {
  await api.close();
});

function cli(run: (args: string[]) => Promise<number>, ...args: string[]): Promise<CliResult> {
  return captureCliOutput(() => run([...args, '--config', configPath]));
}

async function receive(from: string, to: string, text: string): Promise<void> {
  await service.receive('sim', { from, to, text, receivedAt: '', raw: text });
}

async function suppressed(client: string): Promise<string[]> {
  return (await new InboundAdmin(api.ports.inbound).listOptouts(client)).map((e) => e.msisdn);
}

describe('opt-out keywords', () => {
  it('do nothing until set', async () => {
    await receive('0861111111', '50123', 'STOP');
    expect(await suppressed('acme')).toEqual([]);
  });

  it('set-optout stores the keywords trimmed and case-folded; a matching text opts its sender out of that client only', async () => {
    expect(await cli(clientCommand, 'set-optout', '--name', 'acme', '--keywords', ' STOP, StopAll ')).toMatchObject({ code: 0, stdout: 'client acme: opt-out keywords stop, stopall\n' });
    await receive('0862222222', '50123', '  stop\n');
    await receive('0863333333', '50123', 'StopAll');
    await receive('0864444444', '50123', 'STOP please');
    await receive('0865555555', '50999', 'STOP');
    expect(await suppressed('acme')).toEqual(['353862222222', '353863333333']);
    expect(await suppressed('globex')).toEqual([]);
  });

  it('a later campaign skips suppressed numbers during processing and does not count them in totalSent', async () => {
    const response = await api.postCampaign(acme.token, {
      text: 'Sale today', from: 'ACME',
      recipientInfo: [{ msisdn: '0862222222' }, { msisdn: '0871234567' }, { msisdn: '+353863333333' }],
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const summary = await vi.waitFor(async () => {
      const r = await api.getSummary(acme.token, id);
      expect(r.status).toBe(200);
      return (await r.json()) as { totalSent: number };
    }, { timeout: 10_000, interval: 20 });
    expect(summary).toEqual({ totalSent: 1, delivered: 0, undelivered: 0, pending: 1 });
    expect(api.store.db.prepare('SELECT msisdn FROM recipients WHERE campaign_id = ?').pluck().all(id)).toEqual(['353871234567']);
  });

  it('optout add, list and remove work by hand, numbers normalised; bad input is a usage error', async () => {
    expect((await cli(optoutCommand, 'add', '--client', 'acme', '--msisdn', '+447700900123')).stdout).toBe('447700900123 added to the suppression list of client acme\n');
    const listed = JSON.parse((await cli(optoutCommand, 'list', '--client', 'acme', '--json')).stdout) as { keywords: string[]; numbers: { msisdn: string; source: string }[] };
    expect(listed.keywords).toEqual(['stop', 'stopall']);
    expect(listed.numbers.map((n) => [n.msisdn, n.source])).toEqual([['353862222222', 'keyword'], ['353863333333', 'keyword'], ['447700900123', 'admin']]);
    expect((await cli(optoutCommand, 'remove', '--client', 'acme', '--msisdn', '0862222222')).code).toBe(0);
    expect(await cli(optoutCommand, 'remove', '--client', 'acme', '--msisdn', '0862222222')).toMatchObject({ code: 1, stderr: 'smsgate: 353862222222 is not on the suppression list of client "acme"\n' });
    const bad = await cli(optoutCommand, 'add', '--client', 'acme', '--msisdn', '086 222');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('usage: smsgate optout add --client NAME --msisdn N');
    expect((await cli(optoutCommand, 'list', '--client', 'nobody')).code).toBe(1);
    expect(await suppressed('acme')).toEqual(['353863333333', '447700900123']);
  });

  it('--clear turns the keywords off; an empty keyword is refused', async () => {
    expect((await cli(clientCommand, 'set-optout', '--name', 'acme', '--keywords', 'STOP,,END')).code).toBe(2);
    expect((await cli(clientCommand, 'set-optout', '--name', 'acme', '--clear')).stdout).toBe('client acme: opt-out keywords off\n');
    await receive('0869999999', '50123', 'STOP');
    expect(await suppressed('acme')).not.toContain('353869999999');
  });
});
