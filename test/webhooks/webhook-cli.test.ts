import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/cli/commands/webhook.js';
import { silentLogger } from '../../src/common/log.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { defaultKeyFileFor, SecretBox } from '../../src/store/secret-box.js';
import { enqueueDeliveryReceipt, WebhookSender } from '../../src/webhooks/index.js';
import { captureCliOutput } from '../support/cli-output.js';
import { ensureBuilt, REPO_ROOT } from '../support/gateway-process.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { freePort } from '../support/free-port.js';


describe('smsgate webhook list / replay', () => {
  let dir: string;
  let configPath: string;
  let store: Store;
  let box: SecretBox;
  let receiver: WebhookReceiver;
  let out: string;
  let err: string;
  const servers: Server[] = [];
  const HOUR_MS = 3_600_000;

  const writeConfig = (apiPort: number) => {
    writeFileSync(configPath, JSON.stringify({
      database: { path: join(dir, 'gate.sqlite') },
      api: { host: '127.0.0.1', port: apiPort },
      transports: [{ name: 'sim', type: 'simulator' }],
      webhooks: { timeoutMs: 1_000, retryDelaysMs: [20, 20, 20], breakerOpenMs: 1_000, breakerFailures: 2, concurrency: 4 },
      logging: { level: 'silent' },
    }));
  };
  const addClient = (name: string, url: string | null, secret: string | null) =>
    Number(store.db.prepare('INSERT INTO clients (name, webhook_url, webhook_secret_enc, created_at) VALUES (?, ?, ?, 0)')
      .run(name, url, secret === null ? null : box.seal(secret)).lastInsertRowid);
  /** A dead letter of the client that died `agoMs` before now; returns its id. */
  const deadLetter = (clientId: number, msisdn: string, agoMs: number, lastError = 'HTTP_500'): number => {
    const campaignId = `00000000-0000-4000-8000-${msisdn.slice(-12).padStart(12, '0')}`;
    store.db.prepare(`INSERT INTO campaigns (id, client_id, state, name, sender, text, created_at) VALUES (?, ?, 'ready', 'n', 'Gate', 't', 0)`).run(campaignId, clientId);
    const recipientId = Number(store.db.prepare('INSERT INTO recipients (campaign_id, msisdn) VALUES (?, ?)').run(campaignId, msisdn).lastInsertRowid);
    const created = Date.now() - agoMs - 20_000;
    enqueueDeliveryReceipt(store.db, { clientId, recipientId, to: msisdn, from: 'Gate', status: 'UNDELIV', clientReference: `ref-${msisdn.slice(-3)}` }, created);
    const id = Number(store.db.prepare('SELECT MAX(id) FROM webhook_outbox').pluck().get());
    store.db.prepare(`UPDATE webhook_outbox SET state = 'dead', attempts = 4, last_error = ?, dead_at = ? WHERE id = ?`).run(lastError, Date.now() - agoMs, id);
    return id;
  };
  const cli = async (...args: string[]) => {
    out = '';
    err = '';
    const result = await captureCliOutput(() => run([...args, '--config', configPath]));
    out = result.stdout;
    err = result.stderr;
    return result.code;
  };
  const row = (id: number) => store.db.prepare('SELECT state, attempts, last_error, dead_at FROM webhook_outbox WHERE id = ?').get(id);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'smsgate-webhook-cli-'));
    configPath = join(dir, 'config.json');
    writeConfig(await freePort());
    store = await openStore({ path: join(dir, 'gate.sqlite') });
    box = SecretBox.fromKeyFile(defaultKeyFileFor(join(dir, 'gate.sqlite')));
    receiver = await WebhookReceiver.start({ secret: 'whsec' });
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise<void>((resolve) => s.close(() => resolve()));
    await receiver.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists dead letters with id, client, created, attempts, last_error and the exact body, as JSON', async () => {
    const acme = addClient('acme', receiver.url, 'whsec');
    const other = addClient('other', receiver.url, null);
    const a = deadLetter(acme, '353871000001', 2 * HOUR_MS);
    const b = deadLetter(other, '353871000002', HOUR_MS, 'HTTP_403');
    enqueueDeliveryReceipt(store.db, { clientId: acme, recipientId: 1, to: '353871000001', from: 'Gate', status: 'DELIVRD', clientReference: null }, Date.now());
    expect(await cli('list', '--failed', '--json')).toBe(0);
    const listed = JSON.parse(out) as Record<string, unknown>[];
    expect(listed.map((r) => r['id'])).toEqual([a, b]);
    expect(listed[0]).toMatchObject({
      id: a, client: 'acme', clientId: acme, attempts: 4, lastError: 'HTTP_500',
      body: '{"To":"353871000001","From":"Gate","Status":"UNDELIV","ClientReference":"ref-001"}',
    });
    expect(listed[0]?.['createdAt']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(listed[1]).toMatchObject({ client: 'other', lastError: 'HTTP_403' });

    expect(await cli('list', '--failed', '--client', 'other')).toBe(0);
    expect(out.split('\n')[0]).toBe('id\tclient\tcreated\tattempts\tlast_error\tbody');
    expect(out).toContain(`${b}\tother\t`);
    expect(out).not.toContain('acme');

    expect(await cli('list', '--json')).toBe(0);
    expect(JSON.parse(out)).toEqual({ pending: 1, delivered: 0, dead: 2 });
  });

  it('refuses bad arguments with the usage line (exit 2) and names a missing client (exit 1)', async () => {
    expect(await cli('list', '--client', 'acme')).toBe(2);
    expect(err).toMatch(/usage: smsgate webhook list/);
    expect(await cli('replay')).toBe(2);
    expect(err).toMatch(/--client is required/);
    expect(await cli('replay', '--client', 'acme', '--since', 'yesterday')).toBe(2);
    expect(err).toMatch(/TIME 'yesterday'/);
    expect(await cli('purge')).toBe(2);
    expect(await cli('list', '--failed', '--bogus')).toBe(2);
    expect(await cli('replay', '--client', 'nobody')).toBe(1);
    expect(err).toContain("no client named 'nobody'");
  });

  it('replays only the client dead letters since TIME, and says when no server is running to send them', async () => {
    const acme = addClient('acme', receiver.url, 'whsec');
    const other = addClient('other', receiver.url, 'whsec');
    const old = deadLetter(acme, '353872000001', 3 * HOUR_MS);
    const recent = deadLetter(acme, '353872000002', 10 * 60_000);
    const othersRecent = deadLetter(other, '353872000003', 10 * 60_000);
    expect(await cli('replay', '--client', 'acme', '--since', '1h')).toBe(0);
    expect(out).toContain("re-queued 1 dead letter of client 'acme'");
    expect(out).toMatch(/no smsgate server answered .* --now/);
    expect(row(recent)).toEqual({ state: 'pending', attempts: 0, last_error: null, dead_at: null });
    expect(row(old)).toMatchObject({ state: 'dead' });
    expect(row(othersRecent)).toMatchObject({ state: 'dead' });
    expect(receiver.count).toBe(0);

    // A server started later picks the replayed row up like any pending event.
    const sender = new WebhookSender({ store, secretBox: box, logger: silentLogger(), config: { retryDelaysMs: [20, 20, 20] }, pollIntervalMs: 20 });
    sender.start();
    await vi.waitFor(() => expect(row(recent)).toMatchObject({ state: 'delivered', attempts: 1 }), { timeout: 10_000, interval: 10 });
    await sender.stop();
    expect(receiver.requests[0]?.signatureOk).toBe(true);
    expect(receiver.requests[0]?.rawBody.toString()).toBe('{"To":"353872000002","From":"Gate","Status":"UNDELIV","ClientReference":"ref-002"}');
  });

  it('tells the operator a running server will send them when one answers on the API address', async () => {
    const health = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('Healthy'));
    servers.push(health);
    await new Promise<void>((resolve) => health.listen(0, '127.0.0.1', resolve));
    writeConfig((health.address() as AddressInfo).port);
    const acme = addClient('acme', receiver.url, 'whsec');
    const id = deadLetter(acme, '353873000001', 60_000);
    expect(await cli('replay', '--client', 'acme', '--now', '--json')).toBe(0);
    expect(JSON.parse(out)).toEqual({ client: 'acme', requeued: 1, serverRunning: true });
    // With a server running, --now leaves the sending to it (no duplicate from this command).
    expect(row(id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(receiver.count).toBe(0);
  });

  it('with --now and no server, sends the replayed events itself and reports the outcome', async () => {
    const acme = addClient('acme', receiver.url, 'whsec');
    const first = deadLetter(acme, '353874000001', 60_000);
    const second = deadLetter(acme, '353874000002', 60_000);
    receiver.script({ kind: 'status', statusCode: 503 }, { kind: 'status', statusCode: 410 });
    expect(await cli('replay', '--client', 'acme', '--now', '--json')).toBe(0);
    expect(JSON.parse(out)).toEqual({ client: 'acme', requeued: 2, serverRunning: false, delivered: 1, dead: 1, pending: 0 });
    const states = [row(first), row(second)] as { state: string; last_error: string | null }[];
    expect(states.map((s) => s.state).sort()).toEqual(['dead', 'delivered']);
    expect(states.find((s) => s.state === 'dead')?.last_error).toBe('HTTP_410');
    expect(receiver.count).toBe(3);
    // Off a terminal the output is the result alone: no progress line.
    expect(err).not.toContain('replay:');
  });

  it('with --now on a terminal, shows the replay progress', async () => {
    const acme = addClient('acme', receiver.url, 'whsec');
    const ids = ['353875000001', '353875000002', '353875000003'].map((msisdn) => deadLetter(acme, msisdn, 60_000));
    ensureBuilt();
    const cliPath = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
    // script(1) gives the command a pseudo-terminal, as an operator's shell would.
    const { stdout } = await promisify(execFile)('script', [
      '-qec', `${process.execPath} ${cliPath} webhook replay --client acme --now --config ${configPath}`, '/dev/null',
    ], { timeout: 30_000 });
    expect(stdout).toMatch(/\rreplay: 3\/3 sent \(3 delivered, 0 dead\)\r?\n/);
    expect(stdout).toContain('sent from this command: 3 delivered, 0 dead again, 0 still pending');
    expect(ids.map((id) => (row(id) as { state: string }).state)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(receiver.count).toBe(3);
  });
});
