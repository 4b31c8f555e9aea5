/**
 * Reloading the config of a running `smsgate serve` (a real process on a SQLite file) with two
 * SMPP test SMSCs: SIGHUP adding a route and a transport while a campaign runs leaves the
 * unchanged carrier's bind alone (binds and unbinds counted at its SMSC) and sends the new route's
 * parts to the new transport; a config that does not validate is refused with its key and file in
 * the log and the old one keeps running; `smsgate config reload` does the same through the admin
 * listener and exits 1 on a broken file; a changed transport rebinds; a removed one drains (its
 * in-flight submits answered, its queued parts kept) and nothing is lost when it comes back;
 * /status.json shows the running config's hash change.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, GatewayProcess, REPO_ROOT, seedAccount, writeGatewayConfig, type SeededAccount } from '../support/gateway-process.js';
import { freePort } from '../support/free-port.js';
import { killPeer, spawnPeer } from '../support/peer-process.js';
import { TestSmsc } from '../support/smsc/test-smsc.js';
import { getSummary, postCampaign, readDatabase, tempDir, until } from './e2e-setup.js';

const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

let dir: string;
let smscA: TestSmsc;
let smscB: TestSmsc;
let gateway: GatewayProcess;
let account: SeededAccount;
let configPath: string;
let adminPort: number;

interface StatusJson {
  configHash: string;
  routes: { route: string; strategy: string; transports: { name: string; up: boolean }[]; current: string | null }[];
  transports: { name: string; state: string }[];
}

function carrier(name: string, smsc: TestSmsc, settings: { window: number; maxPerSecond: number }): Record<string, unknown> {
  return { name, type: 'smpp', host: smsc.address.host, port: smsc.address.port, systemId: 'esme', password: 'secret', bindMode: 'transceiver', ...settings };
}

function configWith(transports: Record<string, unknown>[], routes: { prefix: string; transport: string }[]): Record<string, unknown> {
  return {
    database: { path: join(dir, 'smsgate.sqlite') },
    api: { host: '127.0.0.1', port: 0 },
    admin: { host: '127.0.0.1', port: adminPort },
    logging: { level: 'info' },
    engine: { pollIntervalMs: 50, retryBaseDelayMs: 200, drainTimeoutMs: 2_000 },
    processing: { pollIntervalMs: 50 },
    transports,
    routes,
  };
}

const A = (): Record<string, unknown> => carrier('carrierA', smscA, { window: 10, maxPerSecond: 20 });
const B = (settings = { window: 10, maxPerSecond: 1_000 }): Record<string, unknown> => carrier('carrierB', smscB, settings);

async function status(): Promise<StatusJson> {
  const response = await fetch(`http://127.0.0.1:${adminPort}/status.json`);
  expect(response.status).toBe(200);
  return (await response.json()) as StatusJson;
}

function commands(smsc: TestSmsc, command: string): number {
  return smsc.received.filter((pdu) => pdu.command === command).length;
}

/** Log lines from index `from` on that contain every one of `needles`. */
function logLinesWith(from: number, ...needles: string[]): string[] {
  return gateway.logLines.slice(from).filter((line) => needles.every((n) => line.includes(n)));
}

async function sighupAndWait(from: number, outcome: 'config reloaded' | 'config reload refused'): Promise<string> {
  gateway.kill('SIGHUP');
  const lines = await until(() => logLinesWith(from, outcome), (found) => found.length > 0, 20_000, `"${outcome}" in the serve's log`);
  return lines[0] as string;
}

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawnPeer(process.execPath, [CLI, ...args], { cwd: dir, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => killPeer(child, 'SIGKILL'), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function numbers(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);
}

async function send(msisdns: readonly string[]): Promise<string> {
  const { status: code, id } = await postCampaign(gateway.baseUrl, account.token, { text: 'Reload test', from: 'Reload', recipientInfo: msisdns.map((msisdn) => ({ msisdn })) });
  expect(code).toBe(202);
  return id;
}

async function allDelivered(id: string, total: number, timeoutMs: number): Promise<void> {
  const summary = await until(() => getSummary(gateway.baseUrl, account.token, id), (s) => s !== undefined && s.pending === 0, timeoutMs, `campaign ${id} final`);
  expect(summary).toEqual({ totalSent: total, delivered: total, undelivered: 0, pending: 0 });
}

function destinationsAt(smsc: TestSmsc, prefix: string): string[] {
  return smsc.submits.map((s) => s.wire.destination_addr).filter((to) => to.startsWith(prefix));
}

beforeAll(async () => {
  ensureBuilt();
  dir = tempDir('reload');
  smscA = await TestSmsc.start({ autoReceipt: { stat: 'DELIVRD' } });
  smscB = await TestSmsc.start({ autoReceipt: { stat: 'DELIVRD' } });
  adminPort = await freePort();
  const written = writeGatewayConfig(dir, configWith([A()], [{ prefix: '', transport: 'carrierA' }]));
  configPath = written.path;
  account = await seedAccount(written.config, { senders: [{ name: 'Reload', type: 0 }] });
  gateway = await GatewayProcess.spawn(configPath);
  await until(() => smscA.boundSessions().length, (n) => n === 1, 10_000, 'carrierA bound');
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await smscA?.stop();
  await smscB?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('config reload of a running serve', () => {
  let hashBefore: string;

  it('SIGHUP adds a route and a transport mid-campaign; the unchanged carrier keeps its one bind', async () => {
    const first = await status();
    hashBefore = first.configHash;
    expect(hashBefore).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(first.routes).toEqual([{ route: '', prefix: '', clients: null, strategy: 'single', transports: [{ name: 'carrierA', up: true }], current: 'carrierA' }]);

    const irish = numbers('353871000', 150);
    const running = await send(irish);
    // carrierA sends 20 parts a second: the campaign takes about 7.5 s, the reload lands inside it.
    await until(() => smscA.submitCount, (n) => n >= 20, 20_000, 'the campaign under way at carrierA');

    const from = gateway.logLines.length;
    writeGatewayConfig(dir, configWith([A(), B()], [{ prefix: '44', transport: 'carrierB' }, { prefix: '', transport: 'carrierA' }]));
    const line = await sighupAndWait(from, 'config reloaded');
    expect(JSON.parse(line)).toMatchObject({ unchanged: ['carrierA'], added: ['carrierB'], changed: [], removed: [] });
    expect(smscA.submitCount, 'the reload came while the campaign was still running').toBeLessThan(irish.length);
    await until(() => smscB.boundSessions().length, (n) => n === 1, 10_000, 'carrierB bound');

    const uk = numbers('447700900', 20);
    const second = await send(uk);
    await allDelivered(second, uk.length, 30_000);
    await allDelivered(running, irish.length, 60_000);

    expect(destinationsAt(smscB, '44').sort()).toEqual([...uk].sort());
    expect(destinationsAt(smscA, '44')).toEqual([]);
    expect(destinationsAt(smscA, '353').sort()).toEqual([...irish].sort());
    // The unchanged carrier's bind was never dropped: one bind, no unbind, the same session throughout.
    expect(commands(smscA, 'bind_transceiver')).toBe(1);
    expect(commands(smscA, 'unbind')).toBe(0);
    expect(new Set(smscA.submits.map((s) => s.sessionId)).size).toBe(1);

    const after = await status();
    expect(after.configHash).not.toBe(hashBefore);
    expect(after.routes).toEqual([
      { route: '44', prefix: '44', clients: null, strategy: 'single', transports: [{ name: 'carrierB', up: true }], current: 'carrierB' },
      { route: '', prefix: '', clients: null, strategy: 'single', transports: [{ name: 'carrierA', up: true }], current: 'carrierA' },
    ]);
    expect(after.transports.map((t) => t.name)).toEqual(['carrierA', 'carrierB']);
    const page = await (await fetch(`http://127.0.0.1:${adminPort}/status`)).text();
    expect(page).toContain(after.configHash);
    expect(page).toContain('<tr data-route="44">');
  }, 120_000);

  it('refuses a route to an unknown transport and a file that is not JSON, naming the file and key; the old config runs on', async () => {
    const running = await status();
    let from = gateway.logLines.length;
    writeFileSync(configPath, JSON.stringify(configWith([A(), B()], [{ prefix: '44', transport: 'carrierB' }, { prefix: '', transport: 'carrierA' }, { prefix: '49', transport: 'nowhere' }])));
    const unknown = await sighupAndWait(from, 'config reload refused');
    expect(unknown).toContain(configPath);
    expect(unknown).toContain('routes[2].transport');
    expect(unknown).toContain('no transport named \\"nowhere\\"');
    // The admin listener answers the same refusal (what `smsgate config reload` prints), and
    // takes no reload from a page of another site.
    const asked = await fetch(`http://127.0.0.1:${adminPort}/reload`, { method: 'POST' });
    expect(asked.status).toBe(422);
    expect(await asked.json()).toMatchObject({ reloaded: false, file: configPath, configHash: running.configHash, error: { code: 'CONFIG_INVALID', key: 'routes[2].transport' } });
    const crossSite = await fetch(`http://127.0.0.1:${adminPort}/reload`, { method: 'POST', headers: { 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status).toBe(403);

    from = gateway.logLines.length;
    writeFileSync(configPath, '{ "transports": [');
    const notJson = await sighupAndWait(from, 'config reload refused');
    expect(notJson).toContain(configPath);
    expect(logLinesWith(from, 'config reloaded')).toEqual([]);

    expect((await status()).configHash).toBe(running.configHash);
    // Still the reloaded config: UK numbers go to carrierB, the rest to carrierA, binds untouched.
    const uk = numbers('447700901', 5);
    await allDelivered(await send(uk), uk.length, 30_000);
    expect(destinationsAt(smscB, '4477009010').length).toBe(5);
    expect(commands(smscA, 'bind_transceiver')).toBe(1);
    expect(commands(smscB, 'bind_transceiver')).toBe(1);
    expect(commands(smscA, 'unbind') + commands(smscB, 'unbind')).toBe(0);
  }, 60_000);

  it('smsgate config reload exits 1 with the file and key on a broken file, and rebinds a changed transport', async () => {
    const before = await status();
    writeFileSync(configPath, JSON.stringify(configWith([A(), B({ window: 0, maxPerSecond: 1_000 })], [{ prefix: '44', transport: 'carrierB' }, { prefix: '', transport: 'carrierA' }])));
    const from = gateway.logLines.length;
    const refused = await runCli(['config', 'reload', '--config', configPath]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(configPath);
    expect(refused.stderr).toContain('transports[1].window');
    expect(logLinesWith(from, 'config reloaded')).toEqual([]);
    expect((await status()).configHash).toBe(before.configHash);

    // carrierB's window and rate change: it unbinds and binds again; carrierA is left alone.
    writeGatewayConfig(dir, configWith([A(), B({ window: 5, maxPerSecond: 10 })], [{ prefix: '44', transport: 'carrierB' }, { prefix: '', transport: 'carrierA' }]));
    const applied = await runCli(['config', 'reload', '--config', configPath, '--json']);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    const outcome = JSON.parse(applied.stdout) as { via: string; reloaded: boolean; configHash: string; transports: Record<string, string[]> };
    expect(outcome).toMatchObject({ via: 'admin', reloaded: true, transports: { unchanged: ['carrierA'], changed: ['carrierB'], added: [], removed: [] } });
    await until(() => commands(smscB, 'bind_transceiver'), (n) => n === 2, 10_000, 'carrierB bound again');
    expect(commands(smscB, 'unbind')).toBe(1);
    await until(() => smscB.boundSessions().length, (n) => n === 1, 10_000, 'carrierB bound once');
    expect(commands(smscA, 'bind_transceiver')).toBe(1);
    expect(commands(smscA, 'unbind')).toBe(0);
    const after = await status();
    expect(after.configHash).toBe(outcome.configHash);
    expect(after.configHash).not.toBe(before.configHash);
  }, 60_000);

  it('drains a removed transport mid-campaign: in-flight answered, the rest follows the new routes, none lost or sent twice', async () => {
    const uk = numbers('447700902', 80);
    const id = await send(uk);
    const atStart = destinationsAt(smscB, '4477009020').length;
    expect(atStart).toBe(0);
    // carrierB sends 10 a second now (about 8 s for the campaign): remove it once a few went out.
    await until(() => destinationsAt(smscB, '4477009020').length, (n) => n >= 10, 20_000, 'the campaign under way at carrierB');
    writeGatewayConfig(dir, configWith([A()], [{ prefix: '', transport: 'carrierA' }]));
    // The serve logs "config reloaded" once the removed transport has drained and unbound.
    const from = gateway.logLines.length;
    const line = await sighupAndWait(from, 'config reloaded');
    expect(JSON.parse(line)).toMatchObject({ unchanged: ['carrierA'], removed: ['carrierB'], added: [], changed: [] });
    expect(smscB.boundSessions()).toEqual([]);
    expect(commands(smscB, 'unbind')).toBe(2);

    const sentBeforeRemoval = destinationsAt(smscB, '4477009020').length;
    expect(sentBeforeRemoval).toBeLessThan(uk.length);
    // Claimed but not yet submitted when the drain began: back in the queue with no attempt spent,
    // then the new routes (every number to carrierA) move them there (docs/behaviour/routes.md).
    await allDelivered(id, uk.length, 30_000);
    const parts = readDatabase(join(dir, 'smsgate.sqlite'), (db) =>
      db.prepare('SELECT transport, MAX(attempts) AS most, COUNT(*) AS n FROM message_parts WHERE campaign_id = ? GROUP BY transport ORDER BY transport').all(id),
    ) as { transport: string; most: number; n: number }[];
    expect(parts).toEqual([
      { transport: 'carrierA', most: 1, n: uk.length - sentBeforeRemoval },
      { transport: 'carrierB', most: 1, n: sentBeforeRemoval },
    ]);
    // None lost, none sent twice: each number once, carrierB's before its removal, carrierA's after.
    expect(destinationsAt(smscB, '4477009020').length).toBe(sentBeforeRemoval);
    const sent = [...destinationsAt(smscA, '4477009020'), ...destinationsAt(smscB, '4477009020')];
    expect(sent.sort()).toEqual([...uk].sort());
    expect(commands(smscA, 'bind_transceiver')).toBe(1);

    // carrierB back (the config before its removal): it binds again and takes route 44's new parts.
    writeGatewayConfig(dir, configWith([A(), B({ window: 5, maxPerSecond: 10 })], [{ prefix: '44', transport: 'carrierB' }, { prefix: '', transport: 'carrierA' }]));
    expect((await runCli(['config', 'reload', '--config', configPath])).code).toBe(0);
    const more = numbers('447700903', 5);
    await allDelivered(await send(more), more.length, 30_000);
    expect(destinationsAt(smscB, '4477009030').length).toBe(more.length);
    expect(commands(smscA, 'unbind')).toBe(0);
  }, 90_000);

  it('without an admin listener to ask, the command signals the pid holding the database', async () => {
    const before = await status();
    const from = gateway.logLines.length;
    // The serve re-reads its own file: carrierB's route now covers 4478 too.
    writeGatewayConfig(dir, configWith([A(), B({ window: 5, maxPerSecond: 10 })], [{ prefix: '4478', transport: 'carrierB' }, { prefix: '44', transport: 'carrierB' }, { prefix: '', transport: 'carrierA' }]));
    // The command is given a copy without the admin section, on the same database.
    const { admin: _admin, ...withoutAdmin } = configWith([A()], [{ prefix: '', transport: 'carrierA' }]);
    const bare = join(dir, 'no-admin.json');
    writeFileSync(bare, JSON.stringify(withoutAdmin));
    const signalled = await runCli(['config', 'reload', '--config', bare]);
    expect(signalled.code).toBe(0);
    expect(signalled.stdout).toContain(`sent SIGHUP to smsgate serve (pid ${gateway.pid})`);
    await until(() => logLinesWith(from, 'config reloaded'), (lines) => lines.length === 1, 20_000, 'the serve reloaded');
    const after = await status();
    expect(after.configHash).not.toBe(before.configHash);
    expect(after.routes?.map((r) => r.route)).toEqual(['4478', '44', '']);
  }, 60_000);
});
