/**
 * The SMPP server inside a real gateway (SQLite file, simulator transport, API and admin listener
 * on loopback), its parts stood in for by the recording fakes of the lifecycle tests around a real
 * TCP listener: the gateway builds it only when `smppServer` is set, starts it once the engine runs
 * and stops it (customers unbound) while the engine still runs; a port in use fails the start with
 * the keys named and leaves nothing listening. Its sessions (this node's with window use and rate,
 * another node's without) and the deliveries waiting per account appear in /status.json, on the
 * status page in Chromium, in `smsgate status`'s text, and as the three smsgate_smpp_server_*
 * series of /metrics, which promtool accepts. TLS files that cannot be read refuse the build.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StatusFacts } from '../../src/admin/status-facts.js';
import { formatStatus } from '../../src/cli/commands/status.js';
import { isGatewayError } from '../../src/common/errors.js';
import { createLogger, silentLogger } from '../../src/common/log.js';
import { resolveConfigFromObject, type SmsGateConfig } from '../../src/gateway/config.js';
import type { SmppServerContext } from '../../src/gateway/smpp-server-hook.js';
import { createGateway, type Gateway } from '../../src/index.js';
import { tempDir } from '../e2e/e2e-setup.js';
import { fakeSmppServer, sessionView, type FakeServer } from '../smpp-server/lifecycle/fake-parts.js';
import { scrape } from './admin-fixture.js';

function configFor(dir: string, smppServer: Record<string, unknown> | undefined): SmsGateConfig {
  return resolveConfigFromObject(
    {
      database: { path: join(dir, 'smsgate.sqlite') },
      api: { host: '127.0.0.1', port: 0 },
      admin: { host: '127.0.0.1', port: 0 },
      engine: { pollIntervalMs: 50 },
      transports: [{ name: 'sim', type: 'simulator' }],
      ...(smppServer === undefined ? {} : { smppServer }),
    },
    join(dir, 'smsgate.json'),
    {},
  );
}

function adminUrlOf(gateway: Gateway): string {
  const where = gateway.admin?.address();
  if (where === undefined) throw new Error('admin listener not listening');
  return `http://127.0.0.1:${where.port}`;
}

async function statusJson(gateway: Gateway): Promise<StatusFacts> {
  const response = await fetch(`${adminUrlOf(gateway)}/status.json`);
  expect(response.status).toBe(200);
  return (await response.json()) as StatusFacts;
}

function promtool(text: string): { status: number | null; output: string } {
  const result = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const SMPP_SERIES = /^smsgate_smpp_server_/m;

describe('a gateway with smppServer set', () => {
  let dir: string;
  let gateway: Gateway;
  let fake: FakeServer;
  let context: SmppServerContext | undefined;
  let browser: Browser | undefined;
  /** What the simulator transport's state was when the bind gate started and when the listener closed. */
  const engineSeen: { atStart?: string; atClose?: string } = {};
  const remote = sessionView('s-remote', 'beta', { nodeId: 'node-b', bindType: 'receiver', address: '10.0.0.9', boundAt: Date.parse('2026-01-02T03:04:05.000Z'), windowSize: 50 });

  beforeAll(async () => {
    dir = tempDir('smpp-server-status');
    const transportState = (): string => context?.engine.currentTransports()[0]?.currentState().state ?? 'no engine';
    gateway = await createGateway(configFor(dir, { host: '127.0.0.1', port: 0, windowSize: 50 }), {
      smppServerFactory: (ctx) => {
        context = ctx;
        fake = fakeSmppServer({
          rows: [remote, sessionView('s-local', 'acme', { nodeId: 'node-a', boundAt: Date.parse('2026-01-02T03:00:00.000Z'), windowSize: 50 })],
          waiting: new Map([['acme', 3], ['beta', 12], ['idle', 0]]),
          onBindGateStart: () => (engineSeen.atStart = transportState()),
          onListenerClose: () => (engineSeen.atClose = transportState()),
        });
        return fake.server;
      },
    });
    await gateway.start();
    fake.listener().sessions = [
      sessionView('s-local', 'acme', { nodeId: 'node-a', boundAt: Date.parse('2026-01-02T03:00:00.000Z'), windowInUse: 3, windowSize: 50, submitsPerSecond: 12.5, address: '192.0.2.7' }),
    ];
    fake.listener().counts = [
      { systemId: 'acme', status: 'ESME_ROK', count: 5 },
      { systemId: 'acme', status: 'ESME_RTHROTTLED', count: 2 },
      { systemId: 'beta', status: 'ESME_RSUBMITFAIL', count: 1 },
    ];
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hands the factory the smppServer section with its defaults, and starts the server once the engine runs', () => {
    expect(context?.config.smppServer).toEqual({ host: '127.0.0.1', port: 0, windowSize: 50, enquireLinkIntervalMs: 30_000, responseTimeoutMs: 10_000, receiptRetentionHours: 72 });
    // Routes as running now (a reload changes them), for the intake's "no route" answer.
    expect(context?.runningConfig().routes).toEqual([{ prefix: '', transport: 'sim' }]);
    // SQLite: a single gateway, no node id of a cluster.
    expect(context?.node.nodeId()).toBeNull();
    expect(context?.cluster).toBeUndefined();
    expect(fake.events).toEqual(['bindGate.start', 'sender.start', 'listener.listen']);
    expect(engineSeen.atStart).toBe('bound');
    const where = gateway.smppServer?.address();
    expect(where?.port).toBeGreaterThan(0);
  });

  it('/status.json lists every session of the cluster, this node\'s with window use and rate, and the deliveries waiting per account', async () => {
    const facts = await statusJson(gateway);
    expect(facts.smppServer).toEqual({
      sessions: [
        {
          sessionId: 's-local', systemId: 'acme', bindType: 'transceiver', address: '192.0.2.7', nodeId: 'node-a',
          boundAt: '2026-01-02T03:00:00.000Z', windowInUse: 3, windowSize: 50, submitsPerSecond: 12.5,
        },
        {
          sessionId: 's-remote', systemId: 'beta', bindType: 'receiver', address: '10.0.0.9', nodeId: 'node-b',
          boundAt: '2026-01-02T03:04:05.000Z', windowInUse: null, windowSize: 50, submitsPerSecond: null,
        },
      ],
      deliveriesWaiting: [
        { systemId: 'acme', waiting: 3 },
        { systemId: 'beta', waiting: 12 },
        { systemId: 'idle', waiting: 0 },
      ],
    });
  });

  it('smsgate status prints the same sessions and waiting deliveries', async () => {
    const lines = formatStatus(await statusJson(gateway), null);
    const from = lines.indexOf('smpp server sessions (account, bind, address, node; window in use; submit rate):');
    expect(from).toBeGreaterThan(0);
    expect(lines.slice(from, from + 8)).toEqual([
      'smpp server sessions (account, bind, address, node; window in use; submit rate):',
      '  acme transceiver from 192.0.2.7 on node-a since 2026-01-02T03:00:00.000Z; window 3 / 50; 12.5 submit_sm/s',
      '  beta receiver from 10.0.0.9 on node-b since 2026-01-02T03:04:05.000Z; window ? / 50 (on node-b)',
      '',
      'smpp server deliveries waiting (receipts and inbound messages, by account):',
      '  acme: 3',
      '  beta: 12',
      '  idle: 0',
    ]);
  });

  it('/metrics has this node\'s sessions, its submit answers and the deliveries waiting per account, and promtool accepts it', async () => {
    const { text, series } = await scrape(adminUrlOf(gateway));
    // Sessions: this node's only (beta's session is on node-b); an account with none has a 0 series.
    expect(series.get('smsgate_smpp_server_sessions{account="acme"}')).toBe(1);
    expect(series.get('smsgate_smpp_server_sessions{account="beta"}')).toBe(0);
    expect(series.get('smsgate_smpp_server_sessions{account="idle"}')).toBe(0);
    expect(series.get('smsgate_smpp_server_submits_total{account="acme",status="ESME_ROK"}')).toBe(5);
    expect(series.get('smsgate_smpp_server_submits_total{account="acme",status="ESME_RTHROTTLED"}')).toBe(2);
    expect(series.get('smsgate_smpp_server_submits_total{account="beta",status="ESME_RSUBMITFAIL"}')).toBe(1);
    expect(series.get('smsgate_smpp_server_receipts_waiting{account="acme"}')).toBe(3);
    expect(series.get('smsgate_smpp_server_receipts_waiting{account="beta"}')).toBe(12);
    expect(series.get('smsgate_smpp_server_receipts_waiting{account="idle"}')).toBe(0);
    expect(text).toContain('# TYPE smsgate_smpp_server_sessions gauge');
    expect(text).toContain('# TYPE smsgate_smpp_server_submits_total counter');
    expect(text).toContain('# TYPE smsgate_smpp_server_receipts_waiting gauge');
    const names = new Set([...text.matchAll(/^(smsgate_smpp_server_[a-z_]+)\{/gm)].map((m) => m[1]));
    expect([...names].sort()).toEqual(['smsgate_smpp_server_receipts_waiting', 'smsgate_smpp_server_sessions', 'smsgate_smpp_server_submits_total']);
    const lint = promtool(text);
    expect(lint.output).toBe('');
    expect(lint.status).toBe(0);
  });

  it('the status page in Chromium shows the sessions and the deliveries waiting', async () => {
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${adminUrlOf(gateway)}/status`);
    const local = page.locator('tr[data-smpp-session="s-local"]');
    expect(await local.locator('.account').textContent()).toBe('acme');
    expect(await local.locator('.bind-type').textContent()).toBe('transceiver');
    expect(await local.locator('.address').textContent()).toBe('192.0.2.7');
    expect(await local.locator('.node').textContent()).toBe('node-a');
    expect(await local.locator('.window').textContent()).toBe('3 / 50');
    expect(await local.locator('.rate').textContent()).toBe('12.5 submit_sm/s');
    const other = page.locator('tr[data-smpp-session="s-remote"]');
    expect(await other.locator('.window').textContent()).toBe('? / 50 (on node-b)');
    expect(await other.locator('.rate').textContent()).toBe('');
    expect(await page.locator('tr[data-smpp-account="beta"] .waiting').textContent()).toBe('12');
    expect(await page.locator('tr[data-smpp-account="idle"] .waiting').textContent()).toBe('0');
    expect(await page.locator('#smpp-waiting tbody tr').count()).toBe(3);
  });

  it('stops the server, customers unbound first, while the engine still runs', async () => {
    await gateway.stop();
    expect(fake.events).toEqual(['bindGate.start', 'sender.start', 'listener.listen', 'listener.close', 'listener.closed', 'sender.stop']);
    expect(engineSeen.atClose).toBe('bound');
    expect(context?.engine.currentTransports()[0]?.currentState().state).not.toBe('bound');
    expect(gateway.smppServer?.address()).toBeUndefined();
  });
});

describe('a gateway without smppServer', () => {
  let dir: string;
  let gateway: Gateway;
  let calls = 0;

  beforeAll(async () => {
    dir = tempDir('smpp-server-off');
    gateway = await createGateway(configFor(dir, undefined), {
      smppServerFactory: () => {
        calls += 1;
        return fakeSmppServer().server;
      },
    });
    await gateway.start();
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('builds no server: no smppServer facts, the page says it is off, no smsgate_smpp_server_* series', async () => {
    expect(calls).toBe(0);
    expect(gateway.smppServer).toBeUndefined();
    expect((await statusJson(gateway)).smppServer).toBeNull();
    const page = await (await fetch(`${adminUrlOf(gateway)}/status`)).text();
    expect(page).toContain('<h2>SMPP server (customers)</h2><p class="quiet">Off: the config has no smppServer section.</p>');
    const { text } = await scrape(adminUrlOf(gateway));
    expect(text).not.toMatch(SMPP_SERIES);
    expect(formatStatus(await statusJson(gateway), null).join('\n')).not.toContain('smpp server');
  });
});

describe('a gateway whose SMPP port is taken', () => {
  let dir: string;
  let taken: Server;
  afterEach(async () => {
    await new Promise<void>((resolve) => taken.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails its start with SMPP_SERVER_LISTEN_FAILED naming the keys, and nothing is left listening', async () => {
    dir = tempDir('smpp-server-taken');
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const port = (taken.address() as { port: number }).port;
    let fake: FakeServer | undefined;
    const gateway = await createGateway(configFor(dir, { port }), {
      smppServerFactory: () => {
        fake = fakeSmppServer({ port });
        return fake.server;
      },
    });
    const failure = await gateway.start().then(
      () => null,
      (err: unknown) => err,
    );
    expect(isGatewayError(failure, 'SMPP_SERVER_LISTEN_FAILED')).toBe(true);
    expect((failure as Error).message).toBe(`SMPP server cannot listen on 127.0.0.1:${port} (smppServer.host, smppServer.port): EADDRINUSE`);
    expect(fake?.events).toEqual(['bindGate.start', 'sender.start', 'listener.listen', 'sender.stop']);
    // The gateway stopped itself: neither the API nor the admin listener took a port.
    expect(gateway.address()).toBeUndefined();
    expect(gateway.admin?.address()).toBeUndefined();
    // And the SQLite file is free again: another gateway can be built on it.
    const again = await createGateway(configFor(dir, undefined), { logger: silentLogger() });
    await again.stop();
  });
});

describe('a gateway with smppServer set but built without a server', () => {
  it('builds the SMPP server itself when given no factory: it listens, and /status.json lists no session yet', async () => {
    const dir = tempDir('smpp-server-default');
    const gateway = await createGateway(configFor(dir, { port: 0 }));
    try {
      await gateway.start();
      const address = gateway.smppServer?.address();
      expect(address?.port).toBeGreaterThan(0);
      await new Promise<void>((resolve, reject) => {
        const socket = connect(address?.port ?? 0, address?.host ?? '127.0.0.1', () => {
          socket.end();
          resolve();
        });
        socket.once('error', reject);
      });
      expect((await statusJson(gateway)).smppServer).toEqual({ sessions: [], deliveriesWaiting: [] });
    } finally {
      await gateway.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a gateway whose smppServer.tls key cannot be read', () => {
  it('is refused when built, naming the config file and the key, before the database is opened', async () => {
    const dir = tempDir('smpp-server-tls');
    try {
      const config = configFor(dir, { port: 0, tls: { certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') } });
      const failure = await createGateway(config, { configFile: '/etc/smsgate/smsgate.json', smppServerFactory: () => fakeSmppServer().server }).then(
        () => null,
        (err: unknown) => err,
      );
      expect(isGatewayError(failure, 'CONFIG_INVALID')).toBe(true);
      expect((failure as Error).message).toBe(`/etc/smsgate/smsgate.json: smppServer.tls.certFile: ${join(dir, 'cert.pem')} cannot be read (ENOENT)`);
      expect(existsSync(join(dir, 'smsgate.sqlite'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
