/**
 * The admin listener's other endpoints: /ready (a real write probe and the binds),
 * /status.json, the bearer token when one is configured, and that /health on the API port is
 * still exactly the spec's.
 */
import { createServer as createNetServer } from 'node:net';
import { PassThrough } from 'node:stream';
import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusFacts } from '../../src/admin/status-facts.js';
import { createGateway, createLogger, type Gateway } from '../../src/index.js';
import { writeGatewayConfig } from '../support/gateway-process.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { gatewayConfig, tempDir, until } from '../e2e/e2e-setup.js';
import { msisdns, sendCampaign, startAdminFixture, type AdminFixture } from './admin-fixture.js';

describe('/ready, /status.json and /health', () => {
  let fixture: AdminFixture;
  beforeAll(async () => {
    fixture = await startAdminFixture('ready');
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  it('/health on the API port stays 200 text/plain Healthy', async () => {
    const response = await fetch(`${fixture.apiUrl}/health`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await response.text()).toBe('Healthy');
    // The admin endpoints are not on the API port.
    expect((await fetch(`${fixture.apiUrl}/metrics`)).status).toBe(404);
  });

  it('/ready is 200 with the database writable and the bind up', async () => {
    const response = await fetch(`${fixture.adminUrl}/ready`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      ready: true, database: 'writable', transportsUp: ['carrier'],
      routes: [{ prefix: '', servable: true, transports: [{ name: 'carrier', state: 'bound', up: true }] }],
      reasons: [],
    });
  });

  it('/ready is 503 naming the database while another connection holds the write lock', async () => {
    const other = new Database(`${fixture.dir}/smsgate.sqlite`);
    try {
      other.exec('BEGIN IMMEDIATE');
      const response = await fetch(`${fixture.adminUrl}/ready`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as { ready: boolean; database: string; reasons: string[] };
      expect(body.ready).toBe(false);
      expect(body.database).toBe('not-writable');
      expect(body.reasons).toEqual([expect.stringMatching(/^database not writable: database is locked/)]);
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    expect((await fetch(`${fixture.adminUrl}/ready`)).status).toBe(200);
  });

  it('/status.json gives the binds, queues, campaigns and webhooks per client', async () => {
    const readFacts = async (): Promise<StatusFacts> => (await (await fetch(`${fixture.adminUrl}/status.json`)).json()) as StatusFacts;
    const recipients = msisdns(300);
    // 300 parts at 100 parts/s: about three seconds in progress.
    const id = await sendCampaign(fixture, recipients, 'JSON facts');
    const during = await until(readFacts, (f) => f.campaigns.some((c) => c.id === id && c.total === 300 && c.sent > 0), 20_000, 'the campaign under way');
    expect(during.source).toBe('serve');
    expect(during.transports).toEqual([
      expect.objectContaining({ name: 'carrier', type: 'smpp', state: 'bound', maxPerSecond: 100, links: [expect.objectContaining({ name: '0', state: 'bound', windowSize: 10, lastError: null })] }),
    ]);
    const progress = during.campaigns.find((c) => c.id === id);
    expect(progress).toMatchObject({ name: 'JSON facts', client: 'acme <b>&co', state: 'ready', total: 300 });
    expect((progress?.delivered ?? 0) + (progress?.undelivered ?? 0) + (progress?.pending ?? 0)).toBe(300);
    expect(during.queues).toEqual([{ transport: 'carrier', queued: expect.any(Number), submitting: expect.any(Number) }]);

    const dead = recipients.filter((m) => m.endsWith('8')).length;
    const after = await until(
      readFacts,
      // Once every recipient is final the campaign is shown as finished, with its outcome.
      (f) => f.webhooks.deadLetters === dead && f.webhooks.clients.every((c) => c.pending === 0) && f.campaigns.some((c) => c.id === id && c.finished),
      30_000,
      `${dead} dead letters, nothing pending, the campaign finished`,
    );
    const undeliv = recipients.filter((m) => m.endsWith('9')).length;
    expect(after.campaigns.find((c) => c.id === id)?.outcomes).toEqual({
      delivered: 300 - undeliv,
      undelivered: { total: undeliv, byStatus: [{ name: 'UNDELIV', recipients: undeliv }] },
      rejected: { total: 0, byCode: [] },
      pending: 0,
    });
    // The endpoint answered 400 for those: a permanent error, which leaves the breaker closed.
    expect(after.webhooks.clients).toEqual([{
      clientId: expect.any(Number), client: 'acme <b>&co', hasWebhook: true, pending: 0, dead,
      breaker: 'closed', lastError: 'HTTP_400', lastErrorAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    }]);
    expect(after.gateway).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/), startedAt: expect.any(String), uptimeSeconds: expect.any(Number) });
    expect(after.readiness?.ready).toBe(true);
    expect(after.transports?.[0]?.parts).toEqual({ submitted: 300, accepted: 300, throttled: 0, rejected: 0, failed: 0 });
    expect(after.queues).toEqual([{ transport: 'carrier', queued: 0, submitting: 0 }]);
    expect(after.recentErrors).toEqual(expect.arrayContaining([expect.objectContaining({ level: 'warn', message: 'webhook dead letter' })]));
  });

  it('/ready is 503 naming the transport when the SMSC goes away', async () => {
    await fixture.smsc.smsc.stop();
    const response = await until(() => fetch(`${fixture.adminUrl}/ready`), (r) => r.status === 503, 15_000, '/ready 503');
    const body = (await response.json()) as { reasons: string[]; transportsUp: string[] };
    expect(body.transportsUp).toEqual([]);
    expect(body.reasons).toEqual([
      expect.stringMatching(/^no transport is up: carrier (down|binding)/),
      expect.stringMatching(/^route "" \(every number\) has no transport up to carry it: transport carrier: not bound/),
    ]);
    // The bind's last error and the transport's warnings, as the status page shows them.
    const facts = await until(
      async () => (await (await fetch(`${fixture.adminUrl}/status.json`)).json()) as StatusFacts,
      (f) => f.transports?.[0]?.links[0]?.lastError != null && (f.recentErrors ?? []).some((e) => e.context['transport'] === 'carrier'),
      20_000,
      'the bind\'s last error and the failed rebind\'s warning',
    );
    expect(facts.transports?.[0]?.links[0]?.state).not.toBe('bound');
    expect(facts.transports?.[0]?.links[0]?.lastError).toMatch(/connection lost|ECONNREFUSED/);
    expect(facts.recentErrors).toEqual(expect.arrayContaining([expect.objectContaining({ level: 'warn', context: expect.objectContaining({ transport: 'carrier', bind: '0' }) })]));
  });

  it('answers 404 and 405 as problem+json', async () => {
    const missing = await fetch(`${fixture.adminUrl}/nothing`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    await missing.text();
    const wrong = await fetch(`${fixture.adminUrl}/metrics`, { method: 'POST' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD');
    await wrong.text();
  });
});

describe('admin.token', () => {
  const TOKEN = 'an-admin-token-of-some-length';
  let dir: string;
  let smsc: ReceiptingSmsc;
  let gateway: Gateway;
  let adminUrl: string;
  const logs: string[] = [];

  beforeAll(async () => {
    dir = tempDir('admintoken');
    smsc = await ReceiptingSmsc.start();
    const raw = { ...gatewayConfig(dir, smsc.address), admin: { host: '127.0.0.1', port: 0, token: '${SMSGATE_TEST_ADMIN_TOKEN}' } };
    process.env['SMSGATE_TEST_ADMIN_TOKEN'] = TOKEN;
    const { config } = writeGatewayConfig(dir, raw);
    delete process.env['SMSGATE_TEST_ADMIN_TOKEN'];
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')));
    gateway = await createGateway(config, { logger: createLogger({ level: 'debug', destination: stream }) });
    await gateway.start();
    const where = gateway.admin?.address();
    adminUrl = `http://${where?.host}:${where?.port}`;
  });
  afterAll(async () => {
    await gateway?.stop();
    await smsc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses requests without the bearer token or with a wrong one', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: `Bearer ${TOKEN}x` }, { authorization: TOKEN }]) {
      const response = await fetch(`${adminUrl}/status.json`, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="smsgate-admin"');
      await response.text();
    }
  });

  it('serves every endpoint with it', async () => {
    for (const path of ['/metrics', '/status', '/status.json', '/ready']) {
      const response = await fetch(`${adminUrl}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(response.status).toBe(200);
      await response.text();
    }
  });

  it('never logs the token', () => {
    expect(logs.join('')).toContain('admin listener up at');
    expect(logs.join('')).not.toContain(TOKEN);
  });
});

describe('admin.port taken', () => {
  it('fails start with an error naming the admin listener and its keys, and leaves nothing running', async () => {
    const dir = tempDir('adminport');
    const smsc = await ReceiptingSmsc.start();
    const blocker = await new Promise<import('node:net').Server>((resolve) => {
      const server = createNetServer();
      server.listen(0, '127.0.0.1', () => resolve(server));
    });
    try {
      const port = (blocker.address() as import('node:net').AddressInfo).port;
      const { config } = writeGatewayConfig(dir, { ...gatewayConfig(dir, smsc.address), logging: { level: 'silent' }, admin: { host: '127.0.0.1', port } });
      const gateway = await createGateway(config);
      await expect(gateway.start()).rejects.toThrow(`admin listener cannot listen on 127.0.0.1:${port} (admin.host, admin.port): EADDRINUSE`);
      expect(gateway.address()).toBeUndefined();
      await gateway.stop();
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
      await smsc.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
