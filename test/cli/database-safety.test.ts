/**
 * A deleted database and a deleted key file, as an operator meets them, over the built CLI (`node
 * dist/src/cli/main.js`) as child processes on real SQLite files:
 * - `rm gw.sqlite*` under a running serve: /ready and the API answer 503 at once (never a 202 that
 *   the next start would not have); admin commands exit 1 naming the missing file instead of making an
 *   empty database; serve refuses to start on a new database beside the old key file;
 * - the key file removed: every command that reads or writes secrets exits 1 naming the key file and
 *   makes no new key; a fresh install still makes both the database and the key.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfigFromObject } from '../../src/gateway/config.js';
import { freePort } from '../support/free-port.js';
import { ensureBuilt, GatewayProcess, REPO_ROOT, seedAccount } from '../support/gateway-process.js';

const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
const execFileAsync = promisify(execFile);

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

async function smsgate(configPath: string, ...args: string[]): Promise<CliResult> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [CLI, ...args, '--config', configPath], { cwd: REPO_ROOT, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** `smsgate serve` expected to refuse: its exit code and output (it must exit within the timeout). */
async function serveRefused(configPath: string): Promise<CliResult> {
  return smsgate(configPath, 'serve');
}

let dir: string;
let configPath: string;
let dbPath: string;
let keyPath: string;
let adminPort: number;
const gateways: GatewayProcess[] = [];

beforeEach(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'smsgate-db-safety-'));
  dbPath = join(dir, 'data', 'gw.sqlite');
  keyPath = join(dir, 'data', 'gw.key');
  adminPort = await freePort();
  configPath = join(dir, 'smsgate.json');
  writeFileSync(configPath, JSON.stringify({
    database: { path: dbPath },
    api: { host: '127.0.0.1', port: 0 },
    transports: [{ name: 'sim', type: 'simulator' }],
    admin: { host: '127.0.0.1', port: adminPort },
  }));
});

afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.stop();
  rmSync(dir, { recursive: true, force: true });
});

function dataFiles(): string[] {
  return existsSync(join(dir, 'data')) ? readdirSync(join(dir, 'data')).sort() : [];
}

async function ready(): Promise<{ status: number; body: { reasons?: string[] } }> {
  const response = await fetch(`http://127.0.0.1:${adminPort}/ready`);
  return { status: response.status, body: (await response.json()) as { reasons?: string[] } };
}

async function untilReady(): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if ((await ready()).status === 200) return;
    if (Date.now() > deadline) throw new Error(`/ready never answered 200: ${JSON.stringify((await ready()).body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function post(baseUrl: string, token: string): Promise<Response> {
  return fetch(`${baseUrl}/v1/campaign`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ text: 'kept or refused', from: 'Shop', recipientInfo: [{ msisdn: '353870000001' }] }),
  });
}

describe('a database deleted under a running serve', () => {
  it('answers 503 on /ready and the API at once, then admin commands and serve refuse instead of making a new database', async () => {
    const config = resolveConfigFromObject(JSON.parse(JSON.stringify({ database: { path: dbPath }, transports: [{ name: 'sim', type: 'simulator' }] })), configPath);
    const account = await seedAccount(config, { senders: [{ name: 'Shop', type: 0 }] });
    const gateway = await GatewayProcess.spawn(configPath);
    gateways.push(gateway);
    await untilReady();
    expect((await post(gateway.baseUrl, account.token)).status).toBe(202);

    // As the operator did: rm gw.sqlite* (database, -wal, -shm and the serve lock).
    for (const file of dataFiles().filter((name) => name.startsWith('gw.sqlite'))) rmSync(join(dir, 'data', file));

    // At once: no polling, the first answers after the removal refuse.
    const probe = await ready();
    expect(probe.status).toBe(503);
    expect(probe.body.reasons?.join(' ')).toContain(`the database file ${dbPath} was deleted or moved away`);
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await post(gateway.baseUrl, account.token);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await refused.json()) as { status: number }).status).toBe(503);
    }
    // The gateway says why in its log.
    const deadline = Date.now() + 10_000;
    while (!gateway.logLines.some((line) => line.includes('was deleted or moved away')) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(gateway.logLines.some((line) => line.includes('was deleted or moved away'))).toBe(true);
    // A clean stop even so (the serve lock went with the rm): exit 0.
    expect(await gateway.stop(), gateway.logLines.slice(-8).join('\n')).toBe(0);
    gateways.splice(0);

    // Admin commands name the missing file and `smsgate migrate`, and create nothing.
    for (const args of [['campaign', 'list'], ['client', 'list'], ['token', 'list', '--username', account.username], ['status'], ['db', 'backup', join(dir, 'copy.sqlite')]]) {
      const result = await smsgate(configPath, ...args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr, args.join(' ')).toContain(`no database at ${dbPath}`);
      expect(result.stderr, args.join(' ')).toContain('smsgate migrate');
      expect(existsSync(dbPath), args.join(' ')).toBe(false);
    }

    // serve on a new database beside the old key file: the database was deleted or the path is wrong.
    const serve = await serveRefused(configPath);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain(dbPath);
    expect(serve.stderr).toContain(`its key file ${keyPath} exists`);
    expect(existsSync(dbPath)).toBe(false);

    // The same after `smsgate migrate` made an empty database: still no serve beside the old key.
    expect((await smsgate(configPath, 'migrate')).code).toBe(0);
    const afterMigrate = await serveRefused(configPath);
    expect(afterMigrate.code).toBe(1);
    expect(afterMigrate.stderr).toContain(`its key file ${keyPath} exists`);
  }, 120_000);

  it('starts a truly fresh install (no database, no key file) and makes both', async () => {
    expect(dataFiles()).toEqual([]);
    const gateway = await GatewayProcess.spawn(configPath);
    gateways.push(gateway);
    expect(existsSync(dbPath)).toBe(true);
    expect(existsSync(keyPath)).toBe(true);
  }, 60_000);
});

describe('a key file removed beside a database that holds sealed secrets', () => {
  it('makes no new key: every command and serve exit 1 naming the key file', async () => {
    expect((await smsgate(configPath, 'migrate')).code).toBe(0);
    // migrate makes the database, not the key: the first command that seals a secret makes the key.
    expect(existsSync(keyPath)).toBe(false);
    expect((await smsgate(configPath, 'client', 'create', '--name', 'acme', '--webhook-url', 'http://127.0.0.1:9/hook', '--webhook-secret', 'whsec')).code).toBe(0);
    expect(existsSync(keyPath)).toBe(true);
    expect((await smsgate(configPath, 'user', 'create', '--client', 'acme', '--username', 'ann', '--password', 'correct horse battery', '--admin')).code).toBe(0);
    expect((await smsgate(configPath, 'token', 'create', '--username', 'ann')).code).toBe(0);

    rmSync(keyPath);
    const commands = [
      ['client', 'list'],
      ['token', 'list', '--username', 'ann'],
      ['client', 'set-webhook', '--name', 'acme', '--url', 'http://127.0.0.1:9/other', '--secret', 'whsec2'],
      ['token', 'create', '--username', 'ann'],
      ['serve'],
    ];
    for (const args of commands) {
      const result = await smsgate(configPath, ...args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr, args.join(' ')).toContain(`database.keyFile: ${keyPath} does not exist`);
      expect(result.stderr, args.join(' ')).not.toContain('sealed secret does not open');
      expect(existsSync(keyPath), args.join(' ')).toBe(false);
    }
  }, 120_000);
});
