/**
 * The operator's admin CLI against a real SQLite file that a real `smsgate serve` child (simulator
 * transport, a real webhook receiver) is using at the same time: config check, token list/revoke
 * --id, user and client list/deactivate/activate (checked over HTTP), user set-password, sender
 * list/remove, campaign list/show, message show and db backup while serving.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as campaignCommand } from '../../src/cli/commands/campaign.js';
import { run as clientCommand } from '../../src/cli/commands/client.js';
import { run as configCommand } from '../../src/cli/commands/config.js';
import { run as dbCommand } from '../../src/cli/commands/db.js';
import { run as messageCommand } from '../../src/cli/commands/message.js';
import { run as senderCommand } from '../../src/cli/commands/sender.js';
import { run as tokenCommand } from '../../src/cli/commands/token.js';
import { run as userCommand } from '../../src/cli/commands/user.js';
import { captureCliOutput, type CliResult } from '../support/cli-output.js';
import { ensureBuilt, GatewayProcess, REPO_ROOT, seedAccount, writeGatewayConfig, type SeededAccount } from '../support/gateway-process.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const execFileAsync = promisify(execFile);
const COMMANDS = {
  campaign: campaignCommand, client: clientCommand, config: configCommand, db: dbCommand, message: messageCommand,
  sender: senderCommand, token: tokenCommand, user: userCommand,
};
const PASSWORD = 'correct horse battery staple';

let dir: string;
let configPath: string;
let receiver: WebhookReceiver;
let gateway: GatewayProcess;
let account: SeededAccount;
let campaignId: string;

function smsgate(command: keyof typeof COMMANDS, ...args: string[]): Promise<CliResult> {
  return captureCliOutput(() => COMMANDS[command]([...args, '--config', configPath]));
}

async function json<T>(command: keyof typeof COMMANDS, ...args: string[]): Promise<T> {
  const result = await smsgate(command, ...args, '--json');
  expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as T;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function getCampaign(token: string, id = campaignId): Promise<Response> {
  return fetch(`${gateway.baseUrl}/v1/campaign/${id}`, { headers: { authorization: `Bearer ${token}` } });
}

function login(username: string, password: string): Promise<Response> {
  return fetch(`${gateway.baseUrl}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: 'messaging-api', grant_type: 'password', username, password }).toString(),
  });
}

async function postCampaign(recipients: { msisdn: string; ClientReference?: string }[], text = 'Your table is ready'): Promise<string> {
  const response = await fetch(`${gateway.baseUrl}/v1/campaign`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${account.token}` },
    body: JSON.stringify({ text, from: 'ACME', recipientInfo: recipients }),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

beforeAll(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'smsgate-operate-'));
  receiver = await WebhookReceiver.start();
  const written = writeGatewayConfig(dir, {
    database: { path: join(dir, 'data', 'gw.sqlite') },
    api: { host: '127.0.0.1', port: 0 },
    transports: [{ name: 'sim', type: 'simulator', receiptDelayMs: 20, outcomes: [{ suffix: '9', status: 'UNDELIV', kind: 'receipt' }] }],
    routes: [{ prefix: '', transport: 'sim' }],
  });
  configPath = written.path;
  account = await seedAccount(written.config, { webhookUrl: receiver.url, senders: [{ name: 'ACME', type: 0 }] });
  gateway = await GatewayProcess.spawn(configPath);
  campaignId = await postCampaign([{ msisdn: '0871234567', ClientReference: 'r1' }, { msisdn: '0871234569', ClientReference: 'r2' }, { msisdn: '+447700900123' }]);
  await until(async () => (await getCampaign(account.token)).json() as Promise<{ pending?: number }>, (s) => s.pending === 0, 20_000, 'the campaign to finish');
  await receiver.waitForCount(3, 20_000);
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('config check', () => {
  it('prints the effective config with defaults applied and secrets masked', async () => {
    const file = join(dir, 'carrier.json');
    writeFileSync(file, JSON.stringify({
      database: { path: join(dir, 'other.sqlite') },
      transports: [
        { name: 'carrier', type: 'smpp', host: '127.0.0.1', port: 2775, systemId: 'esme', password: '${SMPP_PASSWORD:-hunter2}' },
        { name: 'modems', type: 'modem', devices: [{ path: '/dev/ttyUSB0', pin: '4321' }] },
      ],
    }));
    const result = await captureCliOutput(() => configCommand(['check', '--config', file, '--json']));
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).not.toContain('hunter2');
    expect(result.stdout).not.toContain('4321');
    const body = JSON.parse(result.stdout) as { file: string; valid: boolean; config: Record<string, any> };
    expect(body).toMatchObject({ file, valid: true });
    expect(body.config.transports[0]).toMatchObject({ name: 'carrier', password: '[redacted]', systemId: 'esme' });
    expect(body.config.transports[1].devices[0]).toMatchObject({ path: '/dev/ttyUSB0', pin: '[redacted]' });
    expect(body.config.api).toMatchObject({ host: '127.0.0.1', port: 8080 });
    expect(body.config.routes).toEqual([{ prefix: '', transport: 'carrier' }]);
    const text = await captureCliOutput(() => configCommand(['check', '--config', file]));
    expect(text.stdout).toMatch(new RegExp(`^${file}: valid`));
    expect(text.stdout).not.toContain('hunter2');
  });

  it('exits 1 naming the file and the key of an invalid config', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ transports: [{ name: 'sim', type: 'simulator', window: 0 }] }));
    expect(await captureCliOutput(() => configCommand(['check', '--config', file]))).toEqual({
      code: 1, stdout: '', stderr: `smsgate: CONFIG_INVALID: ${file}: transports[0].window: must be >= 1\n`,
    });
    writeFileSync(file, JSON.stringify({ api: { prot: 8080 } }));
    const unknown = await captureCliOutput(() => configCommand(['check', '--config', file]));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`${file}: api.prot: unknown key`);
  });

  it('a stray argument is a usage error', async () => {
    const result = await captureCliOutput(() => configCommand(['check', 'extra']));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('usage: smsgate config check');
  });
});

describe('tokens', () => {
  it('token list shows hint, created, last used and expiry, never the token; revoke --id stops it on the API', async () => {
    const created = await json<{ id: number; token: string; hint: string }>('token', 'create', '--username', account.username, '--expires-days', '7');
    expect((await getCampaign(created.token)).status).toBe(200);
    const listed = await smsgate('token', 'list', '--username', account.username, '--json');
    expect(listed.stdout).not.toContain(created.token);
    expect(listed.stdout).not.toContain(account.token);
    const rows = JSON.parse(listed.stdout) as { id: number; hint: string; state: string; createdAt: string; lastUsedAt: string | null; expiresAt: string | null }[];
    expect(rows.map((r) => r.id)).toContain(created.id);
    const row = rows.find((r) => r.id === created.id)!;
    expect(row).toMatchObject({ hint: created.hint, state: 'active' });
    expect(row.lastUsedAt).not.toBeNull();
    expect(Date.parse(row.expiresAt!) - Date.parse(row.createdAt)).toBeGreaterThanOrEqual(7 * 86_400_000 - 1_000);
    const text = await smsgate('token', 'list', '--username', account.username);
    expect(text.stdout.split('\n')[0]).toMatch(/^id\s+hint\s+state\s+created\s+last used\s+expires$/);

    expect(await smsgate('token', 'revoke', '--id', String(created.id))).toEqual({ code: 0, stdout: 'token revoked\n', stderr: '' });
    expect((await getCampaign(created.token)).status).toBe(401);
    expect((await json<{ id: number; state: string }[]>('token', 'list', '--username', account.username)).find((r) => r.id === created.id)?.state).toBe('revoked');
    expect((await smsgate('token', 'revoke', '--id', String(created.id))).stdout).toBe('token was already revoked\n');
  });

  it('token revoke refuses both or neither of --token and --id, and an unknown id exits 1', async () => {
    expect((await smsgate('token', 'revoke', '--id', '1', '--token', account.token)).code).toBe(2);
    expect((await smsgate('token', 'revoke')).code).toBe(2);
    expect((await smsgate('token', 'revoke', '--id', 'abc')).code).toBe(2);
    expect(await smsgate('token', 'revoke', '--id', '999999')).toEqual({ code: 1, stdout: '', stderr: 'smsgate: no personal access token with id 999999\n' });
    expect(await smsgate('token', 'list', '--username', 'nobody')).toEqual({ code: 1, stdout: '', stderr: 'smsgate: no user named "nobody"\n' });
  });
});

describe('users and clients', () => {
  it('user list shows each user with client, admin and active flags', async () => {
    const users = await json<{ username: string; client: string; isAdmin: boolean; active: boolean }[]>('user', 'list');
    expect(users).toContainEqual(expect.objectContaining({ username: account.username, client: 'acme', isAdmin: true, active: true }));
  });

  it('a deactivated user gets 403 with its PAT and cannot log in; activate restores both', async () => {
    expect((await getCampaign(account.token)).status).toBe(200);
    expect(await smsgate('user', 'deactivate', '--username', account.username)).toEqual({ code: 0, stdout: `user ${account.username} deactivated\n`, stderr: '' });
    expect((await getCampaign(account.token)).status).toBe(403);
    const refused = await login(account.username, PASSWORD);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await json<{ username: string; active: boolean }[]>('user', 'list', '--client', 'acme')).find((u) => u.username === account.username)?.active).toBe(false);
    await json('user', 'activate', '--username', account.username);
    expect((await getCampaign(account.token)).status).toBe(200);
    expect((await login(account.username, PASSWORD)).status).toBe(200);
    expect(await smsgate('user', 'deactivate', '--username', 'nobody')).toEqual({ code: 1, stdout: '', stderr: 'smsgate: no user named "nobody"\n' });
  });

  it('user set-password takes the new password from stdin; the old one stops working', async () => {
    const stdin = Object.getOwnPropertyDescriptor(process, 'stdin');
    Object.defineProperty(process, 'stdin', { value: Readable.from([Buffer.from('a brand new passphrase\n')]), configurable: true });
    let changed: CliResult;
    try {
      changed = await smsgate('user', 'set-password', '--username', account.username, '--password-stdin');
    } finally {
      Object.defineProperty(process, 'stdin', stdin as PropertyDescriptor);
    }
    expect(changed.code).toBe(0);
    expect(changed.stdout).toMatch(new RegExp(`^password of user ${account.username} changed`));
    expect(changed.stdout).not.toContain('a brand new passphrase');
    expect((await login(account.username, PASSWORD)).status).toBe(400);
    expect((await login(account.username, 'a brand new passphrase')).status).toBe(200);
    expect((await smsgate('user', 'set-password', '--username', account.username)).code).toBe(2);
  });

  it('client list, and a deactivated client\'s users get 403 until it is activated', async () => {
    const clients = await json<{ name: string; active: boolean; webhookUrl: string | null; users: number; senders: number }[]>('client', 'list');
    expect(clients).toContainEqual(expect.objectContaining({ name: 'acme', active: true, webhookUrl: receiver.url, users: 1, senders: 1 }));
    await json('client', 'deactivate', '--name', 'acme');
    expect((await getCampaign(account.token)).status).toBe(403);
    expect((await json<{ name: string; active: boolean }[]>('client', 'list')).find((c) => c.name === 'acme')?.active).toBe(false);
    expect(await smsgate('client', 'activate', '--name', 'acme')).toEqual({ code: 0, stdout: 'client acme activated\n', stderr: '' });
    expect((await getCampaign(account.token)).status).toBe(200);
    expect((await smsgate('client', 'deactivate')).code).toBe(2);
  });

  it('sender list and sender remove', async () => {
    await json('sender', 'add', '--client', 'acme', '--sender', 'PROMO', '--type', '1');
    expect((await json<{ client: string; name: string; type: number }[]>('sender', 'list', '--client', 'acme')).map((s) => [s.name, s.type])).toEqual([['ACME', 0], ['PROMO', 1]]);
    expect(await smsgate('sender', 'remove', '--client', 'acme', '--sender', 'PROMO')).toEqual({ code: 0, stdout: 'removed sender PROMO from client acme\n', stderr: '' });
    expect((await json<{ name: string }[]>('sender', 'list')).map((s) => s.name)).toEqual(['ACME']);
    expect(await smsgate('sender', 'remove', '--client', 'acme', '--sender', 'PROMO')).toEqual({ code: 1, stdout: '', stderr: 'smsgate: sender "PROMO" is not on client "acme"\n' });
  });
});

describe('campaigns and messages', () => {
  it('campaign list filters by client and state and shows the counts', async () => {
    const rows = await json<{ id: string; client: string; state: string; totalSent: number; delivered: number; undelivered: number; pending: number }[]>(
      'campaign', 'list', '--client', 'acme', '--state', 'ready');
    expect(rows.find((r) => r.id === campaignId)).toMatchObject({ client: 'acme', state: 'ready', totalSent: 3, delivered: 2, undelivered: 1, pending: 0 });
    expect(await json('campaign', 'list', '--state', 'draft')).toEqual([]);
    const bad = await smsgate('campaign', 'list', '--state', 'sent');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--state must be one of queued, draft, processing, ready, failed');
  });

  it('campaign show gives recipients by status, parts by state, webhooks and timings', async () => {
    const shown = await json<{
      id: string; state: string; recipients: Record<string, number>; parts: Record<string, number>; webhooks: Record<string, number>;
      times: Record<string, string | null>;
    }>('campaign', 'show', campaignId);
    expect(shown).toMatchObject({
      id: campaignId, state: 'ready',
      recipients: { pending: 0, delivered: 2, undelivered: 1 },
      parts: { queued: 0, submitting: 0, submitted: 0, delivered: 2, undelivered: 1 },
      webhooks: { pending: 0, delivered: 3, dead: 0 },
    });
    const t = shown.times;
    for (const key of ['createdAt', 'readyAt', 'dispatchedAt', 'firstSubmittedAt', 'lastFinalAt']) expect(t[key], key).not.toBeNull();
    expect(Date.parse(t['createdAt']!)).toBeLessThanOrEqual(Date.parse(t['readyAt']!));
    expect(Date.parse(t['firstSubmittedAt']!)).toBeLessThanOrEqual(Date.parse(t['lastFinalAt']!));
    const text = await smsgate('campaign', 'show', campaignId);
    expect(text.stdout).toContain('recipients: pending 0, delivered 2, undelivered 1');
    expect(await smsgate('campaign', 'show', '00000000-0000-4000-8000-000000000000')).toEqual({
      code: 1, stdout: '', stderr: 'smsgate: no campaign with id 00000000-0000-4000-8000-000000000000\n',
    });
    expect((await smsgate('campaign', 'show', 'not-a-uuid')).code).toBe(2);
  });

  it('message show finds a number as given to the API and shows part, message id, receipt and webhook attempts', async () => {
    const [message, ...others] = await json<{
      campaign: string; msisdn: string; clientReference: string; status: string; lastStatus: string;
      parts: { state: string; messageId: string | null; attempts: number; receipts: { status: string; final: boolean }[] }[];
      webhooks: { state: string; attempts: number; body: string }[];
    }[]>('message', 'show', '--msisdn', '0871234569', '--campaign', campaignId);
    expect(others).toEqual([]);
    expect(message).toMatchObject({ campaign: campaignId, msisdn: '353871234569', clientReference: 'r2', status: 'undelivered', lastStatus: 'UNDELIV' });
    expect(message!.parts).toHaveLength(1);
    expect(message!.parts[0]).toMatchObject({ state: 'undelivered', attempts: 1, receipts: [{ status: 'UNDELIV', final: true }] });
    expect(message!.parts[0]!.messageId).toMatch(/.+/);
    expect(message!.webhooks).toEqual([expect.objectContaining({ state: 'delivered', attempts: 1 })]);
    expect(JSON.parse(message!.webhooks[0]!.body)).toEqual({ To: '353871234569', From: 'ACME', Status: 'UNDELIV', ClientReference: 'r2' });
    const text = await smsgate('message', 'show', '--msisdn', '353871234569');
    expect(text.stdout).toContain(`353871234569 in campaign ${campaignId}`);
    expect(text.stdout).toContain('part 1/1: undelivered via sim');
    expect(await smsgate('message', 'show', '--msisdn', '353870000000')).toEqual({ code: 1, stdout: '', stderr: 'smsgate: no message to 353870000000\n' });
    expect((await smsgate('message', 'show', '--msisdn', '087 123')).code).toBe(2);
  });
});

describe('db backup', () => {
  it('copies the database consistently while serve is sending a campaign', async () => {
    const recipients = Array.from({ length: 3_000 }, (_, i) => ({ msisdn: `35386${String(i).padStart(7, '0')}` }));
    const busyId = await postCampaign(recipients);
    // The copy is taken while the server writes: its parts are still being sent.
    const file = join(dir, 'backup-1.sqlite');
    const result = await json<{ file: string; bytes: number; keyFile: string }>('db', 'backup', file);
    expect(result).toMatchObject({ file, keyFile: join(dir, 'data', 'gw.key') });
    const copy = new Database(file, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(copy.prepare('SELECT COUNT(*) AS n FROM campaigns WHERE id = ?').get(campaignId)).toEqual({ n: 1 });
      const busy = copy.prepare<[string], { state: string; total_sent: number | null }>('SELECT state, total_sent FROM campaigns WHERE id = ?').get(busyId);
      expect(busy).toBeDefined();
      // One snapshot: a campaign marked ready has all its recipients in the copy.
      if (busy!.state === 'ready') {
        expect(copy.prepare('SELECT COUNT(*) AS n FROM recipients WHERE campaign_id = ?').get(busyId)).toEqual({ n: busy!.total_sent });
      }
      expect(result.bytes).toBe((copy.pragma('page_count', { simple: true }) as number) * (copy.pragma('page_size', { simple: true }) as number));
    } finally {
      copy.close();
    }
    expect(existsSync(`${file}.partial-${process.pid}`)).toBe(false);
    expect(await smsgate('db', 'backup', file)).toEqual({
      code: 1, stdout: '', stderr: `smsgate: ${file} exists already: give a new file name (a backup never overwrites)\n`,
    });
    expect((await smsgate('db', 'backup')).code).toBe(2);
    const elsewhere = join(dir, 'elsewhere.json');
    writeFileSync(elsewhere, JSON.stringify({ database: { path: join(dir, 'missing', 'gw.sqlite') } }));
    expect(await captureCliOutput(() => dbCommand(['backup', join(dir, 'backup-2.sqlite'), '--config', elsewhere]))).toEqual({
      code: 1, stdout: '',
      stderr: `smsgate: no database at ${join(dir, 'missing', 'gw.sqlite')} (database.path): run \`smsgate migrate\` to create a new one; if it was deleted or moved, restore it (with its key file) or correct database.path\n`,
    });
    expect(existsSync(join(dir, 'missing'))).toBe(false);
    await until(async () => (await getCampaign(account.token, busyId)).json() as Promise<{ pending?: number }>, (s) => s.pending === 0, 60_000, 'the busy campaign');
  }, 90_000);

  it('copies a database as it is, even one without the tables this version knows (nothing is prepared on it)', async () => {
    const foreign = join(dir, 'foreign.sqlite');
    const db = new Database(foreign);
    db.exec('CREATE TABLE other_schema (x INTEGER); INSERT INTO other_schema VALUES (42)');
    db.close();
    const config = join(dir, 'foreign.json');
    writeFileSync(config, JSON.stringify({ database: { path: foreign } }));
    const file = join(dir, 'backup-foreign.sqlite');
    const result = await captureCliOutput(() => dbCommand(['backup', file, '--config', config, '--json']));
    expect(result.code).toBe(0);
    const copy = new Database(file, { readonly: true });
    try {
      expect(copy.prepare('SELECT x FROM other_schema').all()).toEqual([{ x: 42 }]);
      expect(copy.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'clients'").get()).toEqual({ n: 0 });
    } finally {
      copy.close();
    }
  });

  it('shows progress when stderr is a terminal', async () => {
    const file = join(dir, 'backup-tty.sqlite');
    const cli = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
    // script(1) gives the command a pseudo-terminal, as an operator's shell would.
    const { stdout } = await execFileAsync('script', ['-qec', `${process.execPath} ${cli} db backup ${file} --config ${configPath}`, '/dev/null'], { timeout: 30_000 });
    expect(stdout).toMatch(/backup: 100% \((\d+)\/\1 pages\)/);
    expect(stdout).toContain(`to ${file}`);
    expect(existsSync(file)).toBe(true);
  });
});
