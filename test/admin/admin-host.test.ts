/**
 * The admin listener answers only the host names it serves (DNS rebinding): over real HTTP, a
 * request naming another host (with an Origin to match, as a rebinding page's would) is refused
 * with 421 and plain text for /status, /status.json, /metrics, /ready and the replay POST, even
 * with the page's CSRF token; its own address, localhost and names in admin.allowedHosts pass.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostHeaderName, servedHostNames } from '../../src/admin/host-check.js';
import { createGateway, type Gateway } from '../../src/index.js';
import { seedAccount, writeGatewayConfig } from '../support/gateway-process.js';
import { gatewayConfig, tempDir } from '../e2e/e2e-setup.js';

interface Answer {
  status: number;
  contentType: string | undefined;
  location: string | undefined;
  body: string;
}

/** fetch() will not set Host: node:http does, as a browser resolving a rebound name would send it. */
function send(port: number, method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // No host header given: none sent (setHost false), as an HTTP/1.0 client would.
    const req = request({ host: '127.0.0.1', port, method, path, setHost: headers['host'] !== undefined, headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], location: res.headers.location, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the admin listener and the Host header', () => {
  const dir = tempDir('admin-host');
  let gateway: Gateway;
  let port: number;

  beforeAll(async () => {
    const raw = {
      ...gatewayConfig(dir, { host: '127.0.0.1', port: 9 }),
      logging: { level: 'silent' },
      transports: [{ name: 'sim', type: 'simulator' }],
      routes: [{ prefix: '', transport: 'sim' }],
      admin: { host: '127.0.0.1', port: 0, allowedHosts: ['status.example.org', 'Gateway-7.Lan'] },
    };
    const { config } = writeGatewayConfig(dir, raw);
    await seedAccount(config, { clientName: 'acme', webhookUrl: 'http://127.0.0.1:9/hook', senders: [] });
    // One dead letter, so the page carries the replay form and its CSRF token.
    const db = new Database(config.database.path);
    try {
      db.prepare(`INSERT INTO webhook_outbox (client_id, recipient_id, body, state, attempts, next_attempt_at, created_at, event_id, last_error, dead_at, dead_reason)
        SELECT id, NULL, '{}', 'dead', 1, 0, ?, ?, 'HTTP_400', ?, 'permanent' FROM clients WHERE name = 'acme'`).run(Date.now(), randomUUID(), Date.now());
    } finally {
      db.close();
    }
    gateway = await createGateway(config);
    await gateway.start();
    port = gateway.admin?.address()?.port ?? 0;
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a rebound name with 421 and plain text on every endpoint, the replay POST included', async () => {
    // A page the listener served itself carries the real CSRF token: the rebinding page would need it too.
    const page = await send(port, 'GET', '/status', { host: `127.0.0.1:${port}` });
    expect(page.status).toBe(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1];
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rebound = { host: `rebind.test:${port}`, origin: `http://rebind.test:${port}` };
    for (const path of ['/status', '/status.json', '/metrics', '/ready']) {
      const answer = await send(port, 'GET', path, rebound);
      expect(answer.status, path).toBe(421);
      expect(answer.contentType, path).toBe('text/plain; charset=utf-8');
      expect(answer.body, path).toMatch(/^421 Misdirected Request: this admin listener does not serve the host "rebind\.test:\d+"/);
      expect(answer.body, path).not.toContain('smsgate status');
      expect(answer.body, path).not.toContain('acme');
    }
    const replay = await send(port, 'POST', '/status/replay', { ...rebound, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      new URLSearchParams({ csrf: csrf ?? '', client: 'acme' }).toString());
    expect(replay.status).toBe(421);
    expect(replay.location).toBeUndefined();
    // Without a port, the same.
    expect((await send(port, 'GET', '/status.json', { host: 'rebind.test' })).status).toBe(421);
    // No Host at all: Node's HTTP server refuses an HTTP/1.1 request without one (400) before the app.
    const none = await send(port, 'GET', '/status.json', {});
    expect(none.status).toBe(400);
    expect(none.body).not.toContain('acme');
  });

  it('answers its own address, the loopback names and admin.allowedHosts, with or without the port', async () => {
    for (const host of [`127.0.0.1:${port}`, '127.0.0.1', `localhost:${port}`, 'localhost', `[::1]:${port}`, 'LOCALHOST', `status.example.org:${port}`, 'status.example.org', 'gateway-7.lan']) {
      expect((await send(port, 'GET', '/status.json', { host })).status, host).toBe(200);
    }
    // The replay POST from a page loaded under an allowed name goes through (303 back to the page).
    const page = await send(port, 'GET', '/status', { host: `status.example.org:${port}` });
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const replay = await send(port, 'POST', '/status/replay',
      { host: `status.example.org:${port}`, origin: `http://status.example.org:${port}`, 'content-type': 'application/x-www-form-urlencoded' },
      new URLSearchParams({ csrf, client: 'acme' }).toString());
    expect(replay.status).toBe(303);
    expect(replay.location).toMatch(/^\/status\?notice=/);
  });
});

describe('host names the listener serves', () => {
  it('reads a Host header as its name, or null when it is not one', () => {
    expect(hostHeaderName('Example.ORG:8081')).toBe('example.org');
    expect(hostHeaderName('[::1]:8081')).toBe('::1');
    expect(hostHeaderName('localhost.')).toBe('localhost');
    for (const bad of ['', 'a:b:c', 'x.example:99999', 'user@x.example', 'x.example/path']) expect(hostHeaderName(bad), bad).toBeNull();
  });

  it('serves the loopback names only on loopback or every address, and interface addresses only on every address', () => {
    const interfaces = () => ['192.0.2.10', 'fe80::1'];
    expect([...servedHostNames('127.0.0.1', [], interfaces)].sort()).toEqual(['127.0.0.1', '::1', 'localhost']);
    expect([...servedHostNames('192.0.2.10', ['gw.example'], interfaces)].sort()).toEqual(['192.0.2.10', 'gw.example']);
    expect([...servedHostNames('0.0.0.0', [], interfaces)].sort()).toEqual(['0.0.0.0', '127.0.0.1', '192.0.2.10', '::1', 'fe80::1', 'localhost']);
  });
});
