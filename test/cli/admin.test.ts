/**
 * The admin commands, each module's run(args) as the `smsgate` dispatcher calls it, against a real SQLite
 * file named by a temp config, with stdout and stderr captured.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthService } from '../../src/auth/index.js';
import { run as clientCommand } from '../../src/cli/commands/client.js';
import { run as migrateCommand } from '../../src/cli/commands/migrate.js';
import { run as senderCommand } from '../../src/cli/commands/sender.js';
import { run as tokenCommand } from '../../src/cli/commands/token.js';
import { run as userCommand } from '../../src/cli/commands/user.js';
import { loadConfig } from '../../src/gateway/config.js';
import { openStore } from '../../src/store/sqlite/database.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { captureCliOutput, type CliResult } from '../support/cli-output.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';

const COMMANDS = { migrate: migrateCommand, client: clientCommand, user: userCommand, token: tokenCommand, sender: senderCommand };

const dir = mkdtempSync(join(tmpdir(), 'smsgate-cli-'));
const configPath = join(dir, 'config.json');
const dbPath = join(dir, 'data', 'gw.sqlite');

function smsgate(command: keyof typeof COMMANDS, ...args: string[]): Promise<CliResult> {
  return captureCliOutput(() => COMMANDS[command](args));
}

const cfg = ['--config', configPath];

async function authenticate(token: string) {
  const config = loadConfig(configPath);
  const store = await openStore({ path: config.database.path });
  try {
    const auth = await AuthService.create(sqliteStorePorts(store).auth, config.auth, SecretBox.fromKeyFile(config.database.keyFile));
    return await auth.authenticate(`Bearer ${token}`, 'current');
  } finally {
    await store.close();
  }
}

beforeAll(() => {
  writeFileSync(configPath, JSON.stringify({ database: { path: dbPath } }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('smsgate admin commands', () => {
  it('migrate applies the schema once, then reports it up to date', async () => {
    const first = await smsgate('migrate', ...cfg, '--json');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ database: dbPath, applied: MIGRATIONS.map((migration) => new migration().name) });
    const second = await smsgate('migrate', ...cfg);
    expect(second).toEqual({ code: 0, stdout: `${dbPath}: up to date\n`, stderr: '' });
  });

  it('client create makes an account, with a webhook and a sealed secret', async () => {
    const created = await smsgate('client', 'create', '--name', 'acme', '--webhook-url', 'https://hooks.example/dlr', '--webhook-secret', 'topsecret', ...cfg, '--json');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({ id: 1, name: 'acme', webhookUrl: 'https://hooks.example/dlr', hasWebhookSecret: true });
    expect(created.stdout).not.toContain('topsecret');
    const plain = await smsgate('client', 'create', '--name', 'globex', ...cfg);
    expect(plain).toEqual({ code: 0, stdout: 'created client globex (id 2): no webhook\n', stderr: '' });
  });

  it('client create of an existing name exits 1 with a clear message', async () => {
    expect(await smsgate('client', 'create', '--name', 'acme', ...cfg)).toEqual({ code: 1, stdout: '', stderr: 'smsgate: client "acme" already exists\n' });
  });

  it('client set-webhook changes the URL, keeps or clears the secret', async () => {
    const kept = await smsgate('client', 'set-webhook', '--name', 'acme', '--url', 'https://hooks.example/v2', ...cfg);
    expect(kept).toMatchObject({ code: 0, stdout: 'updated client acme (id 1): webhook https://hooks.example/v2 (signed)\n' });
    const cleared = await smsgate('client', 'set-webhook', '--name', 'acme', '--url', 'https://hooks.example/v2', '--clear-secret', ...cfg, '--json');
    expect(JSON.parse(cleared.stdout)).toMatchObject({ hasWebhookSecret: false });
    const missing = await smsgate('client', 'set-webhook', '--name', 'nobody', '--url', 'https://x.example/', ...cfg);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: 'smsgate: no client named "nobody"\n' });
    const badUrl = await smsgate('client', 'set-webhook', '--name', 'acme', '--url', 'mailto:a@b', ...cfg);
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toContain('webhook URL must use http or https');
  });

  it('user create adds an administrator; a missing client exits 1', async () => {
    const created = await smsgate('user', 'create', '--client', 'acme', '--username', 'alice', '--password', 'correct horse', '--admin', ...cfg, '--json');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({ id: 1, username: 'alice', clientName: 'acme', isAdmin: true });
    expect(created.stdout).not.toContain('correct horse');
    expect(await smsgate('user', 'create', '--client', 'nope', '--username', 'carol', '--password', 'x'.repeat(12), ...cfg))
      .toEqual({ code: 1, stdout: '', stderr: 'smsgate: no client named "nope"\n' });
  });

  it('user create reads the password from stdin with --password-stdin', async () => {
    const stdin = Object.getOwnPropertyDescriptor(process, 'stdin');
    Object.defineProperty(process, 'stdin', { value: Readable.from([Buffer.from('from stdin, twelve or more\nignored\n')]), configurable: true });
    try {
      const created = await smsgate('user', 'create', '--client', 'acme', '--username', 'dave', '--password-stdin', ...cfg);
      expect(created).toEqual({
        code: 0,
        stdout: 'created user dave (id 2) of client acme\n',
        stderr: 'smsgate: warning: dave is not an administrator, and only administrators may call the API (every request with its tokens is answered 403); ' +
          'make it one with: smsgate user set-admin --username dave\n',
      });
    } finally {
      Object.defineProperty(process, 'stdin', stdin as PropertyDescriptor);
    }
  });

  it('token create prints the token once, and it authenticates', async () => {
    const created = await smsgate('token', 'create', '--username', 'alice', ...cfg);
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^smsgate_pat_[0-9A-Za-z]{43}$/);
    expect(await authenticate(token)).toMatchObject({ ok: true, via: 'pat', identity: { username: 'alice', clientName: 'acme', isAdmin: true } });
  });

  it('token create --expires-days sets the expiry; --json gives the details', async () => {
    const before = Date.now();
    const created = await smsgate('token', 'create', '--username', 'alice', '--expires-days', '30', ...cfg, '--json');
    const body = JSON.parse(created.stdout) as { token: string; hint: string; expiresAt: string; username: string };
    expect(body.username).toBe('alice');
    expect(body.hint).toBe(`smsgate_pat_...${body.token.slice(-4)}`);
    const expiresAt = Date.parse(body.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * 86_400_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000);
  });

  it('token revoke stops the token; revoking again says so; an unknown token exits 1', async () => {
    const token = (await smsgate('token', 'create', '--username', 'alice', ...cfg)).stdout.trim();
    expect(await smsgate('token', 'revoke', '--token', token, ...cfg)).toEqual({ code: 0, stdout: 'token revoked\n', stderr: '' });
    expect(await authenticate(token)).toEqual({ ok: false, reason: 'revoked' });
    expect((await smsgate('token', 'revoke', '--token', token, ...cfg)).stdout).toBe('token was already revoked\n');
    expect(await smsgate('token', 'revoke', '--token', `smsgate_pat_${'Z'.repeat(43)}`, ...cfg))
      .toEqual({ code: 1, stdout: '', stderr: 'smsgate: no such personal access token\n' });
  });

  it('token create for a missing user exits 1', async () => {
    expect(await smsgate('token', 'create', '--username', 'nobody', ...cfg)).toEqual({ code: 1, stdout: '', stderr: 'smsgate: no user named "nobody"\n' });
  });

  it('sender add puts senders of each type on the list', async () => {
    expect(await smsgate('sender', 'add', '--client', 'acme', '--sender', 'ACME', '--type', '0', ...cfg))
      .toEqual({ code: 0, stdout: 'added sender ACME (type 0) to client acme\n', stderr: '' });
    const numeric = await smsgate('sender', 'add', '--client', 'acme', '--sender', '353861234567', '--type', '2', ...cfg, '--json');
    expect(JSON.parse(numeric.stdout)).toEqual({ id: 2, clientName: 'acme', name: '353861234567', type: 2 });
    expect((await smsgate('sender', 'add', '--client', 'acme', '--sender', 'ACME', '--type', '1', ...cfg)).code).toBe(1);
    expect((await smsgate('sender', 'add', '--client', 'nope', '--sender', 'X', '--type', '1', ...cfg)).stderr).toBe('smsgate: no client named "nope"\n');
  });

  it('a config file that is missing exits 1 naming it', async () => {
    const missing = join(dir, 'missing.json');
    expect(await smsgate('client', 'create', '--name', 'x', '--config', missing)).toEqual({ code: 1, stdout: '', stderr: `smsgate: ${missing}: file not found\n` });
  });

  it.each([
    ['client', ['create']],
    ['client', ['create', '--name']],
    ['client', ['--name', 'x']],
    ['client', ['delete', '--name', 'x']],
    ['client', ['create', '--name', 'x', '--url', 'https://a.example/']],
    ['client', ['create', '--name', 'x', '--webhook-secret', 's']],
    ['client', ['set-webhook', '--name', 'x']],
    ['client', ['set-webhook', '--name', 'x', '--url', 'https://a.example/', '--secret', 's', '--clear-secret']],
    ['user', ['create', '--client', 'acme', '--username', 'u']],
    ['user', ['create', '--client', 'acme', '--password', 'p']],
    ['user', ['create', '--client', 'acme', '--username', 'u', '--password', '']],
    ['user', ['remove', '--client', 'acme', '--username', 'u', '--password', 'p']],
    ['token', ['create']],
    ['token', ['create', '--username', 'alice', '--expires-days', '0']],
    ['token', ['create', '--username', 'alice', '--expires-days', 'ten']],
    ['token', ['revoke']],
    ['token', ['list']],
    ['sender', ['add', '--client', 'acme', '--sender', 'X', '--type', '3']],
    ['sender', ['add', '--client', 'acme', '--sender', 'X']],
    ['sender', ['add', '--client', 'acme', '--sender', 'X', '--type', '1', '--bogus']],
    ['migrate', ['now']],
  ] as const)('%s %j is a usage error: usage line, exit 2', async (command, args) => {
    const result = await smsgate(command, ...args, ...cfg);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^smsgate: .+\nusage: smsgate /);
  });
});
