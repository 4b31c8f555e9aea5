/**
 * BindGate on a real SQLite file with real scrypt hashes: the right password binds, a wrong one,
 * an unknown system_id, a deactivated client or an address outside allow_ips is ESME_RBINDFAIL,
 * a bind over max_binds is ESME_RALYBND, unbinding frees the slot, heartbeats keep a session
 * counted, accounts changed after the gate started apply at the next bind, a failing store is
 * ESME_RSYSERR, and no log line carries a password.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { hashPassword } from '../../../src/auth/password.js';
import { createLogger } from '../../../src/common/log.js';
import { BindGate, SESSION_STALE_MS } from '../../../src/smpp-server/bind-gate.js';
import { SERVER_STATUS, type BindDecision, type BindRequest, type ServerSessionInfo, type ServerStatus } from '../../../src/smpp-server/contracts.js';
import { openStore, type Store } from '../../../src/store/sqlite/database.js';
import { sqliteStorePorts, type StorePorts } from '../../../src/store/store-ports.js';

const T0 = 1_766_200_000_000;
const PASSWORD = 'k3Y!9qzT';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const dir = mkdtempSync(join(tmpdir(), 'smsgate-bind-gate-'));
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Fixture {
  store: Store;
  ports: StorePorts;
  gate: BindGate;
  clock: { nowMs: number };
  logs: string[];
  addAccount(systemId: string, options?: { maxBinds?: number | null; allowIps?: string[]; password?: string; client?: string }): Promise<void>;
  sessionIds(): string[];
}

let files = 0;
async function fixture(nodeId = 'node-a'): Promise<Fixture> {
  const store = await openStore({ path: join(dir, `gate-${++files}.sqlite`), synchronous: 'NORMAL' });
  closers.push(() => store.close());
  const ports = sqliteStorePorts(store);
  await ports.auth.insertClient({ name: 'acme', webhookUrl: null, webhookSecretEnc: null }, T0);
  const clock = { nowMs: T0 };
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const gate = new BindGate({
    accounts: ports.smppAccounts, registry: ports.smppSessions, nodeId, now: () => clock.nowMs,
    logger: createLogger({ level: 'debug', destination }), sessionStaleMs: SESSION_STALE_MS,
  });
  await gate.start();
  return {
    store, ports, gate, clock, logs,
    async addAccount(systemId, options = {}) {
      await ports.smppAccounts.add({
        clientName: options.client ?? 'acme', systemId, passwordHash: await hashPassword(options.password ?? PASSWORD),
        maxBinds: options.maxBinds ?? null, allowIps: options.allowIps ?? [],
      }, clock.nowMs);
    },
    sessionIds: () => (store.db.prepare('SELECT id FROM smpp_server_sessions ORDER BY bound_at, id').all() as { id: string }[]).map((r) => r.id),
  };
}

function request(systemId: string, password: string, remoteAddress = '192.0.2.10', bindType: BindRequest['bindType'] = 'transceiver'): BindRequest {
  return { bindType, systemId, password, systemType: '', interfaceVersion: 0x34, remoteAddress };
}

function bound(decision: BindDecision): ServerSessionInfo {
  if (decision.kind !== 'bound') throw new Error(`refused with 0x${decision.status.toString(16)}`);
  return decision.session;
}

const refused = (status: ServerStatus): BindDecision => ({ kind: 'refused', status });

describe('BindGate', () => {
  it('binds with the right password and registers the session under a new UUID', async () => {
    const f = await fixture();
    await f.addAccount('acme01', { maxBinds: 2 });
    const session = bound(await f.gate.bind(request('acme01', PASSWORD, '192.0.2.10', 'receiver')));
    expect(session.sessionId).toMatch(UUID);
    expect(session).toMatchObject({ bindType: 'receiver', remoteAddress: '192.0.2.10', account: { systemId: 'acme01', clientName: 'acme', maxBinds: 2, allowIps: [] } });
    expect(f.sessionIds()).toEqual([session.sessionId]);
    const [row] = await f.ports.smppSessions.listLive(T0 - SESSION_STALE_MS);
    expect(row).toMatchObject({ id: session.sessionId, node_id: 'node-a', bind_type: 'receiver', address: '192.0.2.10', bound_at: T0, heartbeat_at: T0, system_id: 'acme01' });
    const other = bound(await f.gate.bind(request('acme01', PASSWORD)));
    expect(other.sessionId).not.toBe(session.sessionId);
  });

  it('refuses a wrong password, an unknown system_id and a deactivated client with ESME_RBINDFAIL, and logs no password', async () => {
    const f = await fixture();
    await f.addAccount('acme01');
    expect(await f.gate.bind(request('acme01', 'wrong!!1'))).toEqual(refused(SERVER_STATUS.bindFailed));
    expect(await f.gate.bind(request('acme01', `${PASSWORD}x`))).toEqual(refused(SERVER_STATUS.bindFailed));
    expect(await f.gate.bind(request('nobody', PASSWORD))).toEqual(refused(SERVER_STATUS.bindFailed));
    expect(await f.gate.bind(request('ACME01', PASSWORD))).toEqual(refused(SERVER_STATUS.bindFailed));
    await f.ports.auth.setClientActive((await f.ports.auth.clientByName('acme'))?.id as number, false);
    expect(await f.gate.bind(request('acme01', PASSWORD))).toEqual(refused(SERVER_STATUS.bindFailed));
    expect(SERVER_STATUS.bindFailed).toBe(0x0d);
    expect(f.sessionIds()).toEqual([]);
    const reasons = f.logs.map((line) => (JSON.parse(line) as { reason?: string }).reason).filter((r) => r !== undefined);
    expect(reasons).toEqual(['wrong password', 'wrong password', 'unknown system_id', 'unknown system_id', 'client deactivated']);
    expect(f.logs.join('')).not.toContain(PASSWORD);
    expect(f.logs.join('')).not.toContain('wrong!!1');
  });

  it('spends a password check on an unknown system_id too, so its refusal is not quicker', async () => {
    const f = await fixture();
    await f.addAccount('acme01');
    // The fastest of three of each: an unknown id answered without scrypt would be hundreds of
    // times quicker than a wrong password (a lookup against a hash); with it, about as slow.
    const fastest = async (systemId: string): Promise<number> => {
      let best = Number.POSITIVE_INFINITY;
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        expect(await f.gate.bind(request(systemId, 'wrong!!1'))).toEqual(refused(SERVER_STATUS.bindFailed));
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    const wrongPassword = await fastest('acme01');
    const unknownId = await fastest('nobody');
    expect(unknownId).toBeGreaterThan(wrongPassword / 4);
  });

  it('binds only from an allowed address, an IPv4-mapped IPv6 peer matching IPv4 blocks', async () => {
    const f = await fixture();
    await f.addAccount('acme01', { allowIps: ['198.51.100.0/24', '2001:db8:7::/48'] });
    expect((await f.gate.bind(request('acme01', PASSWORD, '198.51.100.7'))).kind).toBe('bound');
    expect((await f.gate.bind(request('acme01', PASSWORD, '::ffff:198.51.100.8'))).kind).toBe('bound');
    expect((await f.gate.bind(request('acme01', PASSWORD, '2001:db8:7::5'))).kind).toBe('bound');
    expect(await f.gate.bind(request('acme01', PASSWORD, '198.51.101.7'))).toEqual(refused(SERVER_STATUS.bindFailed));
    expect(await f.gate.bind(request('acme01', PASSWORD, '::ffff:203.0.113.1'))).toEqual(refused(SERVER_STATUS.bindFailed));
    expect(await f.gate.bind(request('acme01', PASSWORD, '2001:db8:8::5'))).toEqual(refused(SERVER_STATUS.bindFailed));
    expect(f.sessionIds()).toHaveLength(3);
  });

  it('refuses a bind over max_binds with ESME_RALYBND until a session unbinds', async () => {
    const f = await fixture();
    await f.addAccount('acme01', { maxBinds: 2 });
    const first = bound(await f.gate.bind(request('acme01', PASSWORD)));
    bound(await f.gate.bind(request('acme01', PASSWORD)));
    expect(await f.gate.bind(request('acme01', PASSWORD))).toEqual(refused(SERVER_STATUS.alreadyBound));
    expect(SERVER_STATUS.alreadyBound).toBe(0x05);
    await f.gate.unbound(first);
    expect(f.sessionIds()).toHaveLength(1);
    bound(await f.gate.bind(request('acme01', PASSWORD)));
    expect(await f.gate.bind(request('acme01', PASSWORD))).toEqual(refused(SERVER_STATUS.alreadyBound));
  });

  it('keeps a heartbeated session counted; an unrefreshed one stops counting once stale', async () => {
    const f = await fixture();
    await f.addAccount('acme01', { maxBinds: 1 });
    const session = bound(await f.gate.bind(request('acme01', PASSWORD)));
    // Beaten every 15 s: 45 s after the bind, it still holds the one slot.
    for (const at of [15_000, 30_000, 45_000]) {
      f.clock.nowMs = T0 + at;
      expect(await f.gate.heartbeat([session.sessionId])).toEqual([]);
    }
    expect(await f.gate.bind(request('acme01', PASSWORD))).toEqual(refused(SERVER_STATUS.alreadyBound));
    // Not beaten for longer than the stale time: the slot is taken by the next bind.
    f.clock.nowMs = T0 + 45_000 + SESSION_STALE_MS + 1;
    const next = bound(await f.gate.bind(request('acme01', PASSWORD)));
    expect(f.sessionIds()).toEqual([next.sessionId]);
    // The stalled session's heartbeat finds its row gone and says so.
    expect(await f.gate.heartbeat([session.sessionId, next.sessionId])).toEqual([session.sessionId]);
  });

  it('applies accounts added and passwords changed after it started at the next bind', async () => {
    const f = await fixture();
    expect(await f.gate.bind(request('late01', PASSWORD))).toEqual(refused(SERVER_STATUS.bindFailed));
    await f.addAccount('late01');
    bound(await f.gate.bind(request('late01', PASSWORD)));
    await f.ports.smppAccounts.setPassword('late01', await hashPassword('n3w!Pw8x'), T0 + 1);
    expect(await f.gate.bind(request('late01', PASSWORD))).toEqual(refused(SERVER_STATUS.bindFailed));
    bound(await f.gate.bind(request('late01', 'n3w!Pw8x')));
    await f.ports.smppAccounts.remove('late01');
    expect(await f.gate.bind(request('late01', 'n3w!Pw8x'))).toEqual(refused(SERVER_STATUS.bindFailed));
  });

  it('removes its own node\'s leftover rows when it starts', async () => {
    const f = await fixture('node-a');
    await f.addAccount('acme01', { maxBinds: 1 });
    bound(await f.gate.bind(request('acme01', PASSWORD)));
    // The same node id started again (a restart): its old session is not in its way.
    const restarted = new BindGate({
      accounts: f.ports.smppAccounts, registry: f.ports.smppSessions, nodeId: 'node-a', now: () => f.clock.nowMs,
      logger: createLogger({ level: 'silent' }), sessionStaleMs: SESSION_STALE_MS,
    });
    await restarted.start();
    expect(f.sessionIds()).toEqual([]);
    bound(await restarted.bind(request('acme01', PASSWORD)));
  });

  it('answers ESME_RSYSERR when the store fails', async () => {
    const f = await fixture();
    await f.addAccount('acme01');
    await f.store.close();
    expect(await f.gate.bind(request('acme01', PASSWORD))).toEqual(refused(SERVER_STATUS.systemError));
    expect(SERVER_STATUS.systemError).toBe(0x08);
  });
});
