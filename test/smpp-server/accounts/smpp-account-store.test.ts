/**
 * SmppAccountStore and SmppSessionRegistry (src/store/smpp-account-port.ts) on a real SQLite file
 * and a real PostgreSQL: accounts added, listed, found for a bind, given a new password and
 * removed, with the coded refusals; bind slots registered up to max_binds, stale rows not
 * counting, heartbeats keeping rows live, and two connections (two nodes on PostgreSQL) racing
 * for an account's last slots never getting more than max_binds between them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isGatewayError, type ErrorCode } from '../../../src/common/errors.js';
import type { SmppServerSessionRow } from '../../../src/store/entities.js';
import { rows } from '../../../src/store/postgres/pool.js';
import { createPgStores } from '../../../src/store/postgres/stores.js';
import type { SmppAccountStore, SmppSessionRegistry } from '../../../src/store/smpp-account-port.js';
import { openStore } from '../../../src/store/sqlite/database.js';
import { sqliteStorePorts } from '../../../src/store/store-ports.js';
import { usePostgresSuite, type PostgresDatabase } from '../../support/postgres-suite.js';

const T0 = 1_766_200_000_000;
const STALE_MS = 20_000;
const HASH = 'scrypt$16384$8$5$c2FsdA==$aGFzaA==';

interface Backend {
  accounts: SmppAccountStore;
  registry: SmppSessionRegistry;
  /** The same database over another connection: another node on PostgreSQL. */
  peerRegistry(): Promise<SmppSessionRegistry>;
  insertClient(name: string): Promise<number>;
  deactivateClient(name: string): Promise<void>;
  sessionRows(): Promise<{ id: string; heartbeat_at: number }[]>;
  passwordHashOf(systemId: string): Promise<string | undefined>;
}

const suite = usePostgresSuite();
const dir = mkdtempSync(join(tmpdir(), 'smsgate-smpp-accounts-'));
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
async function sqliteBackend(): Promise<Backend> {
  const path = join(dir, `accounts-${++files}.sqlite`);
  const store = await openStore({ path, synchronous: 'NORMAL' });
  closers.push(() => store.close());
  const ports = sqliteStorePorts(store);
  return {
    accounts: ports.smppAccounts,
    registry: ports.smppSessions,
    async peerRegistry() {
      const other = await openStore({ path, synchronous: 'NORMAL' }, { migrate: false });
      closers.push(() => other.close());
      return sqliteStorePorts(other).smppSessions;
    },
    insertClient: (name) => ports.auth.insertClient({ name, webhookUrl: null, webhookSecretEnc: null }, T0),
    async deactivateClient(name) {
      store.db.prepare('UPDATE clients SET active = 0 WHERE name = ?').run(name);
    },
    sessionRows: async () => store.db.prepare('SELECT id, heartbeat_at FROM smpp_server_sessions ORDER BY id').all() as { id: string; heartbeat_at: number }[],
    passwordHashOf: async (systemId) =>
      (store.db.prepare('SELECT password_hash FROM smpp_accounts WHERE system_id = ?').get(systemId) as { password_hash: string } | undefined)?.password_hash,
  };
}

async function postgresBackend(): Promise<Backend> {
  const [database, second] = await suite.openNodes(2) as [PostgresDatabase, PostgresDatabase];
  const { pool } = database;
  const stores = createPgStores(pool);
  return {
    accounts: stores.smppAccounts,
    registry: stores.smppSessions,
    peerRegistry: async () => createPgStores(second.pool).smppSessions,
    insertClient: (name) => stores.auth.insertClient({ name, webhookUrl: null, webhookSecretEnc: null }, T0),
    async deactivateClient(name) {
      await pool.query('UPDATE clients SET active = 0 WHERE name = $1', [name]);
    },
    sessionRows: () => rows<{ id: string; heartbeat_at: number }>(pool, 'SELECT id, heartbeat_at FROM smpp_server_sessions ORDER BY id'),
    passwordHashOf: async (systemId) => (await rows<{ password_hash: string }>(pool, 'SELECT password_hash FROM smpp_accounts WHERE system_id = $1', [systemId]))[0]?.password_hash,
  };
}

async function codeOf(call: Promise<unknown>): Promise<{ code: ErrorCode; message: string }> {
  try {
    await call;
  } catch (err) {
    if (isGatewayError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('the call succeeded');
}

function sessionRow(id: string, accountId: number, nodeId: string, atMs: number): SmppServerSessionRow {
  return { id, account_id: accountId, node_id: nodeId, bind_type: 'transceiver', address: '192.0.2.1', bound_at: atMs, heartbeat_at: atMs };
}

describe.each([
  ['sqlite', sqliteBackend],
  ['postgres', postgresBackend],
] as const)('SMPP accounts on %s', (_name, open) => {
  it('adds, lists, finds for a bind, sets a password and removes an account', async () => {
    const backend = await open();
    const acme = await backend.insertClient('acme');
    await backend.insertClient('globex');
    const { accounts } = backend;
    expect(await accounts.add({ clientName: 'acme', systemId: 'acme01', passwordHash: HASH, maxBinds: 2, allowIps: ['198.51.100.0/24'] }, T0)).toEqual({
      systemId: 'acme01', clientName: 'acme', maxBinds: 2, allowIps: ['198.51.100.0/24'], createdAt: T0, updatedAt: T0,
    });
    await accounts.add({ clientName: 'globex', systemId: 'GLOBEX', passwordHash: HASH, maxBinds: null, allowIps: [] }, T0 + 1);
    expect((await accounts.list()).map((a) => [a.systemId, a.clientName, a.maxBinds])).toEqual([['GLOBEX', 'globex', null], ['acme01', 'acme', 2]]);

    const found = await accounts.findForBind('acme01');
    expect(found).toEqual({
      account: { id: expect.any(Number) as number, systemId: 'acme01', clientId: acme, clientName: 'acme', maxBinds: 2, allowIps: ['198.51.100.0/24'] },
      passwordHash: HASH,
      clientActive: true,
    });
    // system_id is matched exactly.
    expect(await accounts.findForBind('ACME01')).toBeUndefined();

    await accounts.setPassword('acme01', 'scrypt$other', T0 + 5);
    expect(await backend.passwordHashOf('acme01')).toBe('scrypt$other');
    expect((await accounts.list()).find((a) => a.systemId === 'acme01')).toMatchObject({ createdAt: T0, updatedAt: T0 + 5 });

    await backend.deactivateClient('acme');
    expect((await accounts.findForBind('acme01'))?.clientActive).toBe(false);

    await accounts.remove('acme01');
    expect(await accounts.findForBind('acme01')).toBeUndefined();
    expect((await accounts.list()).map((a) => a.systemId)).toEqual(['GLOBEX']);
  });

  it('refuses an unknown client, a system id in use and an unknown system id, changing nothing', async () => {
    const backend = await open();
    await backend.insertClient('acme');
    const { accounts } = backend;
    const account = { clientName: 'acme', systemId: 'acme01', passwordHash: HASH, maxBinds: null, allowIps: [] };
    expect(await codeOf(accounts.add({ ...account, clientName: 'nobody' }, T0))).toEqual({ code: 'CLIENT_NOT_FOUND', message: 'no client named "nobody"' });
    expect(await accounts.list()).toEqual([]);
    await accounts.add(account, T0);
    expect(await codeOf(accounts.add({ ...account, passwordHash: 'scrypt$second' }, T0 + 1)))
      .toEqual({ code: 'SMPP_ACCOUNT_EXISTS', message: 'an SMPP account with system id "acme01" already exists' });
    expect(await backend.passwordHashOf('acme01')).toBe(HASH);
    expect(await codeOf(accounts.remove('ghost'))).toEqual({ code: 'SMPP_ACCOUNT_NOT_FOUND', message: 'no SMPP account with system id "ghost"' });
    expect(await codeOf(accounts.setPassword('ghost', HASH, T0))).toEqual({ code: 'SMPP_ACCOUNT_NOT_FOUND', message: 'no SMPP account with system id "ghost"' });
    expect(await accounts.list()).toHaveLength(1);
  });

  it('registers up to max_binds live sessions; stale rows neither count nor stay', async () => {
    const backend = await open();
    await backend.insertClient('acme');
    const { accounts, registry } = backend;
    await accounts.add({ clientName: 'acme', systemId: 'acme01', passwordHash: HASH, maxBinds: 2, allowIps: [] }, T0);
    const id = (await accounts.findForBind('acme01'))?.account.id as number;
    const now = T0 + 100_000;
    const staleBefore = now - STALE_MS;

    // A dead node's row, last refreshed just before the cutoff: it does not count.
    expect(await registry.tryRegister(sessionRow('s-dead', id, 'node-dead', staleBefore - 1), 2, staleBefore - 1 - STALE_MS)).toBe(true);
    expect(await registry.tryRegister(sessionRow('s-1', id, 'node-a', now), 2, staleBefore)).toBe(true);
    expect(await registry.tryRegister(sessionRow('s-2', id, 'node-a', now), 2, staleBefore)).toBe(true);
    expect(await registry.tryRegister(sessionRow('s-3', id, 'node-b', now), 2, staleBefore)).toBe(false);
    expect((await backend.sessionRows()).map((r) => r.id)).toEqual(['s-1', 's-2']);

    const live = await registry.listLive(staleBefore);
    expect(live.map((s) => [s.id, s.system_id, s.node_id, s.bind_type, s.address])).toEqual([
      ['s-1', 'acme01', 'node-a', 'transceiver', '192.0.2.1'], ['s-2', 'acme01', 'node-a', 'transceiver', '192.0.2.1'],
    ]);

    // Unbinding frees a slot.
    await registry.unregister('s-1');
    expect(await registry.tryRegister(sessionRow('s-3', id, 'node-b', now), 2, staleBefore)).toBe(true);
    expect(await registry.tryRegister(sessionRow('s-4', id, 'node-b', now), 2, staleBefore)).toBe(false);
  });

  it('keeps heartbeated rows live and names the ones it no longer has', async () => {
    const backend = await open();
    await backend.insertClient('acme');
    const { accounts, registry } = backend;
    await accounts.add({ clientName: 'acme', systemId: 'acme01', passwordHash: HASH, maxBinds: 1, allowIps: [] }, T0);
    const id = (await accounts.findForBind('acme01'))?.account.id as number;
    expect(await registry.tryRegister(sessionRow('s-1', id, 'node-a', T0), 1, T0 - STALE_MS)).toBe(true);
    // Beaten 30 s later: still live 40 s after the bind, so the one slot stays taken.
    expect(await registry.heartbeat('node-a', ['s-1', 's-gone'], T0 + 30_000)).toEqual(['s-gone']);
    // Another node's heartbeat does not refresh this node's rows.
    expect(await registry.heartbeat('node-b', ['s-1'], T0 + 39_000)).toEqual(['s-1']);
    const at = T0 + 40_000;
    expect(await registry.tryRegister(sessionRow('s-2', id, 'node-b', at), 1, at - STALE_MS)).toBe(false);
    expect((await backend.sessionRows())).toEqual([{ id: 's-1', heartbeat_at: T0 + 30_000 }]);
    // Not beaten again: stale 20 s after its last beat, and the slot is free.
    const later = T0 + 50_001;
    expect(await registry.tryRegister(sessionRow('s-2', id, 'node-b', later), 1, later - STALE_MS)).toBe(true);
    expect(await registry.heartbeat('node-a', ['s-1'], later)).toEqual(['s-1']);
    expect(await registry.heartbeat('node-a', [], later)).toEqual([]);
  });

  it('removes a node\'s rows and counts no limit for max_binds null; a removed account cannot register', async () => {
    const backend = await open();
    await backend.insertClient('acme');
    const { accounts, registry } = backend;
    await accounts.add({ clientName: 'acme', systemId: 'acme01', passwordHash: HASH, maxBinds: null, allowIps: [] }, T0);
    const id = (await accounts.findForBind('acme01'))?.account.id as number;
    for (let i = 0; i < 5; i++) expect(await registry.tryRegister(sessionRow(`s-${i}`, id, i < 3 ? 'node-a' : 'node-b', T0), null, T0 - STALE_MS)).toBe(true);
    expect(await registry.removeNode('node-a')).toBe(3);
    expect((await backend.sessionRows()).map((r) => r.id)).toEqual(['s-3', 's-4']);
    expect(await registry.removeNode('node-a')).toBe(0);
    await accounts.remove('acme01');
    // The account's rows went with it.
    expect(await backend.sessionRows()).toEqual([]);
    expect((await codeOf(registry.tryRegister(sessionRow('s-9', id, 'node-a', T0), null, T0 - STALE_MS))).code).toBe('SMPP_ACCOUNT_NOT_FOUND');
  });

  it('never registers more than max_binds when two connections race for the last slots', async () => {
    const backend = await open();
    await backend.insertClient('acme');
    const { accounts, registry } = backend;
    const peer = await backend.peerRegistry();
    for (let round = 0; round < 5; round++) {
      const systemId = `race${round}`;
      await accounts.add({ clientName: 'acme', systemId, passwordHash: HASH, maxBinds: 2, allowIps: [] }, T0);
      const id = (await accounts.findForBind(systemId))?.account.id as number;
      const attempts = Array.from({ length: 16 }, (_, i) =>
        (i % 2 === 0 ? registry : peer).tryRegister(sessionRow(`r${round}-${i}`, id, i % 2 === 0 ? 'node-a' : 'node-b', T0), 2, T0 - STALE_MS));
      const results = await Promise.all(attempts);
      expect(results.filter(Boolean), `round ${round}`).toHaveLength(2);
      expect((await registry.listLive(T0 - STALE_MS)).filter((s) => s.system_id === systemId), `round ${round}`).toHaveLength(2);
    }
  });
});
