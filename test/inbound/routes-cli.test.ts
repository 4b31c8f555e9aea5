/**
 * `smsgate inbound route add|list|remove` and `smsgate inbound list --unrouted` against a
 * real SQLite file named by a temp config; messages to a routed number belong to its client, a
 * message to a number no client owns is kept, listed as unrouted and queued for no webhook.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as clientCommand } from '../../src/cli/commands/client.js';
import { run as inboundCommand } from '../../src/cli/commands/inbound.js';
import { run as migrateCommand } from '../../src/cli/commands/migrate.js';
import { InboundService } from '../../src/inbound/inbound-service.js';
import { silentLogger } from '../../src/common/log.js';
import { openStore } from '../../src/store/sqlite/database.js';
import { captureCliOutput, type CliResult } from '../support/cli-output.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';

const dir = mkdtempSync(join(tmpdir(), 'smsgate-inbound-cli-'));
const configPath = join(dir, 'config.json');
const dbPath = join(dir, 'gw.sqlite');
const cfg = ['--config', configPath];

function inbound(...args: string[]): Promise<CliResult> {
  return captureCliOutput(() => inboundCommand([...args, ...cfg]));
}

beforeAll(async () => {
  writeFileSync(configPath, JSON.stringify({ database: { path: dbPath } }));
  // Admin commands never create a database: migrate makes it first.
  expect((await captureCliOutput(() => migrateCommand(cfg))).code).toBe(0);
  for (const name of ['acme', 'globex']) expect((await captureCliOutput(() => clientCommand(['create', '--name', name, '--webhook-url', 'http://127.0.0.1:9/h', ...cfg]))).code).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function receive(to: string, text: string): Promise<void> {
  const store = await openStore({ path: dbPath });
  try {
    await new InboundService({ store: sqliteStorePorts(store).inbound, logger: silentLogger(), wakeWebhooks: () => undefined }).receive('sim', { from: '0861234567', to, text, receivedAt: new Date().toISOString(), raw: text });
  } finally {
    await store.close();
  }
}

describe('smsgate inbound route', () => {
  it('adds routes for a long number (normalised), a short code and a SIM number, and lists them as JSON', async () => {
    expect((await inbound('route', 'add', '--client', 'acme', '--to', '0871234567')).stdout).toBe('messages to 353871234567 go to client acme\n');
    expect((await inbound('route', 'add', '--client', 'acme', '--to', '50123')).code).toBe(0);
    expect((await inbound('route', 'add', '--client', 'globex', '--to', '+447700900123')).code).toBe(0);
    const listed = await inbound('route', 'list', '--json');
    expect(JSON.parse(listed.stdout)).toEqual([
      { to: '353871234567', client: 'acme', createdAt: expect.any(String) },
      { to: '50123', client: 'acme', createdAt: expect.any(String) },
      { to: '447700900123', client: 'globex', createdAt: expect.any(String) },
    ]);
  });

  it('refuses a number routed already (exit 1), an unknown client (exit 1) and a non-number (usage, exit 2), changing nothing', async () => {
    const taken = await inbound('route', 'add', '--client', 'globex', '--to', '+353871234567');
    expect(taken).toMatchObject({ code: 1, stderr: 'smsgate: 353871234567 is already routed to client "acme"; remove that route first\n' });
    expect((await inbound('route', 'add', '--client', 'nobody', '--to', '1234')).stderr).toBe('smsgate: no client named "nobody"\n');
    const bad = await inbound('route', 'add', '--client', 'acme', '--to', 'ACME');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--to 'ACME' is not a number[\s\S]*usage: smsgate inbound route add --client NAME --to NUMBER/);
    expect(JSON.parse((await inbound('route', 'list', '--json')).stdout)).toHaveLength(3);
  });

  it('gives a message to the route owner, keeps one to an unowned number as unrouted with no webhook event', async () => {
    await receive('+353871234567', 'for acme');
    await receive('353870000000', 'for nobody');
    const unrouted = JSON.parse((await inbound('list', '--unrouted', '--json')).stdout) as { text: string; client: string | null; to: string }[];
    expect(unrouted.map((m) => [m.to, m.text, m.client])).toEqual([['353870000000', 'for nobody', null]]);
    const all = JSON.parse((await inbound('list', '--json')).stdout) as { text: string; client: string | null }[];
    expect(all.map((m) => [m.text, m.client])).toEqual([['for acme', 'acme'], ['for nobody', null]]);
    const store = await openStore({ path: dbPath });
    try {
      expect(store.db.prepare(`SELECT kind, client_id FROM webhook_outbox`).all()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('removes a route; later messages to that number are unrouted', async () => {
    expect((await inbound('route', 'remove', '--to', '50123')).stdout).toBe('removed the route of 50123 (client acme)\n');
    expect((await inbound('route', 'remove', '--to', '50123'))).toMatchObject({ code: 1, stderr: 'smsgate: no route for 50123\n' });
    await receive('50123', 'late');
    const unrouted = JSON.parse((await inbound('list', '--unrouted', '--json')).stdout) as { text: string }[];
    expect(unrouted.map((m) => m.text)).toEqual(['for nobody', 'late']);
  });
});
