/**
 * "smsgate migrate and every admin command work against either" backend. The same
 * admin flow as test/cli/admin.test.ts (SQLite), through the CLI's dispatcher, against a real
 * throwaway PostgreSQL selected by `database.url`; the token it creates then authenticates through
 * the PostgreSQL ports, and the SQLite-only operations say so and change nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthService } from '../../src/auth/index.js';
import { main } from '../../src/cli/main.js';
import { loadConfig } from '../../src/gateway/config.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { createPgStores } from '../../src/store/postgres/stores.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { captureCliOutput, type CliResult } from '../support/cli-output.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';

const dir = mkdtempSync(join(tmpdir(), 'smsgate-cli-pg-'));
const configPath = join(dir, 'config.json');
const cfg = ['--config', configPath];
let server: PostgresServer;
let url: string;

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase();
  writeFileSync(configPath, JSON.stringify({ database: { url, keyFile: join(dir, 'secrets.key') } }));
});
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

function smsgate(...args: string[]): Promise<CliResult> {
  return captureCliOutput(() => main(args));
}

async function authenticate(token: string) {
  const config = loadConfig(configPath);
  const database = await openDatabase(config.database);
  if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
  try {
    const auth = await AuthService.create(createPgStores(database.pool).auth, config.auth, SecretBox.fromKeyFile(config.database.keyFile));
    return await auth.authenticate(`Bearer ${token}`, 'current');
  } finally {
    await database.close();
  }
}

describe('admin commands on PostgreSQL (database.url)', () => {
  it('migrate applies every migration once', async () => {
    const first = await smsgate('migrate', ...cfg, '--json');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ database: url, applied: MIGRATIONS.map((m) => new m().name) });
    expect(await smsgate('migrate', ...cfg)).toEqual({ code: 0, stdout: `${url}: up to date\n`, stderr: '' });
  });

  it('client, user, token and sender commands create, list and refuse as on SQLite', async () => {
    const client = await smsgate('client', 'create', '--name', 'acme', '--webhook-url', 'https://hooks.example/dlr', '--webhook-secret', 'topsecret', ...cfg, '--json');
    expect(client.code).toBe(0);
    expect(JSON.parse(client.stdout)).toEqual({ id: 1, name: 'acme', webhookUrl: 'https://hooks.example/dlr', hasWebhookSecret: true });
    expect(await smsgate('client', 'create', '--name', 'acme', ...cfg)).toEqual({ code: 1, stdout: '', stderr: 'smsgate: client "acme" already exists\n' });
    const user = await smsgate('user', 'create', '--client', 'acme', '--username', 'alice', '--password', 'correct horse', '--admin', ...cfg, '--json');
    expect(JSON.parse(user.stdout)).toEqual({ id: 1, username: 'alice', clientName: 'acme', isAdmin: true });
    expect(await smsgate('sender', 'add', '--client', 'acme', '--sender', 'ACME', '--type', '0', ...cfg))
      .toEqual({ code: 0, stdout: 'added sender ACME (type 0) to client acme\n', stderr: '' });

    const token = (await smsgate('token', 'create', '--username', 'alice', ...cfg)).stdout.trim();
    expect(token).toMatch(/^smsgate_pat_[0-9A-Za-z]{43}$/);
    expect(await authenticate(token)).toMatchObject({ ok: true, via: 'pat', identity: { username: 'alice', clientName: 'acme', isAdmin: true } });

    const clients = JSON.parse((await smsgate('client', 'list', ...cfg, '--json')).stdout) as { name: string }[];
    expect(clients.map((c) => c.name)).toEqual(['acme']);
    const users = JSON.parse((await smsgate('user', 'list', ...cfg, '--json')).stdout) as { username: string }[];
    expect(users.map((u) => u.username)).toEqual(['alice']);
    const senders = JSON.parse((await smsgate('sender', 'list', ...cfg, '--json')).stdout) as { name: string }[];
    expect(senders.map((s) => s.name)).toEqual(['ACME']);
    const tokens = JSON.parse((await smsgate('token', 'list', '--username', 'alice', ...cfg, '--json')).stdout) as { id: number }[];
    expect(tokens).toHaveLength(1);

    expect(await smsgate('token', 'revoke', '--token', token, ...cfg)).toEqual({ code: 0, stdout: 'token revoked\n', stderr: '' });
    expect(await authenticate(token)).toEqual({ ok: false, reason: 'revoked' });
  });

  it('campaign and webhook listings read the PostgreSQL database', async () => {
    const campaigns = await smsgate('campaign', 'list', ...cfg, '--json');
    expect(campaigns.code).toBe(0);
    expect(JSON.parse(campaigns.stdout)).toEqual([]);
    const deadLetters = await smsgate('webhook', 'list', ...cfg, '--json');
    expect(deadLetters.code).toBe(0);
    // The query ran on PostgreSQL and found nothing: the same answer SQLite gives.
    expect(await smsgate('message', 'show', '--msisdn', '353861234567', ...cfg))
      .toEqual({ code: 1, stdout: '', stderr: 'smsgate: no message to 353861234567\n' });
    const status = await smsgate('status', ...cfg, '--json');
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('"campaigns"');
  });

  it('inbound routes and opt-outs are kept in the PostgreSQL database', async () => {
    expect((await smsgate('inbound', 'route', 'add', '--client', 'acme', '--to', '353861000000', ...cfg)).code).toBe(0);
    const routes = JSON.parse((await smsgate('inbound', 'route', 'list', ...cfg, '--json')).stdout) as { client: string }[];
    expect(routes).toHaveLength(1);
    expect((await smsgate('inbound', 'list', ...cfg, '--json')).code).toBe(0);
    expect((await smsgate('optout', 'add', '--client', 'acme', '--msisdn', '353861234567', ...cfg)).code).toBe(0);
    const optouts = (await smsgate('optout', 'list', '--client', 'acme', ...cfg, '--json')).stdout;
    expect(optouts).toContain('353861234567');
  });

  it('db backup and webhook replay --now say they need SQLite and exit 1', async () => {
    const backup = await smsgate('db', 'backup', join(dir, 'copy.sqlite'), ...cfg);
    expect(backup.code).toBe(1);
    expect(backup.stdout).toBe('');
    expect(backup.stderr).toMatch(/^smsgate: .*PostgreSQL/);
    const replay = await smsgate('webhook', 'replay', '--client', 'acme', '--now', ...cfg);
    expect(replay.code).toBe(1);
    expect(replay.stderr).toContain('webhook replay --now sends from this process, which needs the SQLite database');
  });
});
