/**
 * /ready per route, against a real gateway: numbers starting 353 go to a carrier over SMPP (a test
 * SMSC behind a loopback relay, so the SMSC can be stopped and a new one started at the same
 * address), every other number to the in-process simulator. With the SMSC stopped the simulator is
 * still up, yet /ready must be 503 naming route 353 and why; with an SMSC back it is 200 again.
 */
import { rmSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Readiness } from '../../src/admin/readiness.js';
import type { StatusFacts } from '../../src/admin/status-facts.js';
import { createGateway, type Gateway } from '../../src/index.js';
import { writeGatewayConfig } from '../support/gateway-process.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { gatewayConfig, tempDir, until } from '../e2e/e2e-setup.js';

/** A TCP relay on a fixed loopback port to whichever SMSC is current; with none, connections are closed at once. */
class Relay {
  private target: { host: string; port: number } | null = null;
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<Relay> {
    let relay: Relay | undefined;
    const server = createServer((socket) => relay?.accept(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    relay = new Relay(server);
    return relay;
  }

  get address(): { host: string; port: number } {
    return { host: '127.0.0.1', port: (this.server.address() as AddressInfo).port };
  }

  pointAt(target: { host: string; port: number } | null): void {
    this.target = target;
    if (target === null) for (const socket of this.sockets) socket.destroy();
  }

  private accept(socket: Socket): void {
    if (this.target === null) {
      socket.destroy();
      return;
    }
    const upstream = connect(this.target.port, this.target.host);
    for (const s of [socket, upstream]) {
      this.sockets.add(s);
      s.on('close', () => {
        this.sockets.delete(s);
        socket.destroy();
        upstream.destroy();
      });
      s.on('error', () => undefined);
    }
    socket.pipe(upstream);
    upstream.pipe(socket);
  }

  async close(): Promise<void> {
    this.pointAt(null);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('/ready when the carrier a route needs is down and another transport is up', () => {
  const dir = tempDir('ready-routes');
  let smsc: ReceiptingSmsc | undefined;
  let relay: Relay;
  let gateway: Gateway;
  let adminUrl: string;

  beforeAll(async () => {
    smsc = await ReceiptingSmsc.start();
    relay = await Relay.start();
    relay.pointAt(smsc.address);
    const raw: Record<string, unknown> = {
      ...gatewayConfig(dir, relay.address),
      logging: { level: 'silent' },
      admin: { host: '127.0.0.1', port: 0 },
    };
    raw['transports'] = [...(raw['transports'] as object[]), { name: 'sim', type: 'simulator' }];
    raw['routes'] = [{ prefix: '353', transport: 'carrier' }, { prefix: '', transport: 'sim' }];
    const { config } = writeGatewayConfig(dir, raw);
    gateway = await createGateway(config);
    await gateway.start();
    const address = gateway.admin?.address();
    if (address === undefined) throw new Error('the admin listener is not listening');
    adminUrl = `http://${address.host}:${address.port}`;
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await relay?.close();
    await smsc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const ready = async (): Promise<{ status: number; body: Readiness }> => {
    const response = await fetch(`${adminUrl}/ready`);
    return { status: response.status, body: (await response.json()) as Readiness };
  };

  it('is 200 while both routes have their transport up', async () => {
    const { status, body } = await until(ready, (r) => r.status === 200, 15_000, '/ready 200 with the bind up');
    expect(status).toBe(200);
    expect(body.transportsUp).toEqual(['carrier', 'sim']);
    expect(body.routes).toEqual([
      { prefix: '353', servable: true, transports: [{ name: 'carrier', state: 'bound', up: true }] },
      { prefix: '', servable: true, transports: [{ name: 'sim', state: 'bound', up: true }] },
    ]);
  });

  it('is 503 naming route 353 and its transport once the SMSC is stopped, though the simulator is up', async () => {
    relay.pointAt(null);
    await smsc?.stop();
    smsc = undefined;
    const { status, body } = await until(ready, (r) => r.status === 503, 15_000, '/ready 503 with the SMSC stopped');
    expect(status).toBe(503);
    expect(body.ready).toBe(false);
    expect(body.database).toBe('writable');
    expect(body.transportsUp).toEqual(['sim']);
    // One reason, the route's: some transport is up, so not "no transport is up".
    expect(body.reasons).toEqual([expect.stringMatching(/^route "353" has no transport up to carry it: transport carrier: not bound \((binding|down: .+)\)$/)]);
    expect(body.routes?.[0]).toMatchObject({ prefix: '353', servable: false, transports: [{ name: 'carrier', up: false, why: expect.stringMatching(/^not bound/) }] });
    expect(body.routes?.[1]).toEqual({ prefix: '', servable: true, transports: [{ name: 'sim', state: 'bound', up: true }] });

    // The status page says the same, in its banner.
    const facts = (await (await fetch(`${adminUrl}/status.json`)).json()) as StatusFacts;
    expect(facts.readiness?.ready).toBe(false);
    const page = await (await fetch(`${adminUrl}/status`)).text();
    expect(page).toContain('<strong>Not ready</strong>');
    expect(page).toContain('route &quot;353&quot; has no transport up to carry it: transport carrier: not bound');
  });

  it('is 200 again once an SMSC answers at the carrier\'s address', async () => {
    smsc = await ReceiptingSmsc.start();
    relay.pointAt(smsc.address);
    // The bind retries on its reconnect backoff: allow it a generous while on a loaded machine.
    const { status, body } = await until(ready, (r) => r.status === 200, 60_000, '/ready 200 with the SMSC back');
    expect(status).toBe(200);
    expect(body.reasons).toEqual([]);
    expect(body.transportsUp).toEqual(['carrier', 'sim']);
  }, 70_000);
});
