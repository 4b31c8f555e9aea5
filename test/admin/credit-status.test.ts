/**
 * The status queries behind the credits section of /status, /status.json, `smsgate status` and
 * smsgate_client_credits_available, on SQLite and on a real PostgreSQL: every client's account in
 * one read (a client without a balance unlimited, its send rate or null), and the low mark of
 * credits.lowThreshold moved once per crossing, also when two connections (two nodes) check at once.
 * Credits are written through the ledger writers the engine and the API use.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CreditMovement } from '../../src/accounts/credits.js';
import { SqliteCreditLedger } from '../../src/store/sqlite/credit-ledger.js';
import { openDatabase, openStore } from '../../src/store/sqlite/database.js';
import { applyCreditMovements } from '../../src/store/postgres/credit-ledger.js';
import { createPgStores } from '../../src/store/postgres/stores.js';
import { changes } from '../../src/store/postgres/pool.js';
import type { Async } from '../../src/store/ports.js';
import type { StatusQueries } from '../../src/store/sqlite/status-store.js';
import { sqliteStorePorts, type StorePorts } from '../../src/store/store-ports.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';

const T0_MS = Date.UTC(2026, 0, 5, 9, 0, 0);

interface Node {
  stores: Pick<StorePorts, 'auth' | 'status'>;
}

interface Backend {
  node: Node;
  /** Another connection (pool) to the same database: a second node. */
  peer(): Promise<Node>;
  /** Ledger movements written in one transaction, as the API and the engine write them. */
  apply(movements: CreditMovement[]): Promise<void>;
  /** A statement the accounts commands would run (a send rate, a client made unlimited). */
  exec(sql: string, params: readonly number[]): Promise<void>;
}

const topUp = (clientId: number, credits: number): CreditMovement => ({ clientId, kind: 'top-up', credits, campaignId: null, note: 'test' });

describe.each(['sqlite', 'postgres'] as const)('credits in the status queries (%s)', (kind) => {
  let server: PostgresServer | undefined;
  let dir: string;
  const closers: (() => Promise<void>)[] = [];
  let databases = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'smsgate-credit-status-'));
    if (kind === 'postgres') server = await startPostgres();
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(): Promise<Backend> {
    databases += 1;
    if (kind === 'sqlite') {
      const path = join(dir, `db-${databases}.sqlite`);
      const store = await openStore({ path, synchronous: 'NORMAL' });
      closers.push(() => store.close());
      const ledger = new SqliteCreditLedger(store.db);
      return {
        node: { stores: sqliteStorePorts(store) },
        async peer() {
          const other = await openStore({ path, synchronous: 'NORMAL' }, { migrate: false });
          closers.push(() => other.close());
          return { stores: sqliteStorePorts(other) };
        },
        apply: async (movements) => store.db.transaction(() => ledger.apply(movements, T0_MS))(),
        exec: async (sql, params) => void store.db.prepare(sql.replace(/\$\d+/g, '?')).run(...params),
      };
    }
    const config = { url: await (server as PostgresServer).createDatabase(), path: 'unused', synchronous: 'FULL' as const, keyFile: 'unused' };
    const database = await openDatabase(config);
    closers.push(() => database.close());
    if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
    const pool = database.pool;
    return {
      node: { stores: createPgStores(pool) },
      async peer() {
        const other = await openDatabase(config, { migrate: false });
        closers.push(() => other.close());
        if (other.kind !== 'postgres') throw new Error('expected PostgreSQL');
        return { stores: createPgStores(other.pool) };
      },
      async apply(movements) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await applyCreditMovements(client, movements, T0_MS);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      },
      exec: async (sql, params) => void (await changes(pool, sql, params)),
    };
  }

  async function client(node: Node, name: string): Promise<number> {
    return node.stores.auth.insertClient({ name, webhookUrl: null, webhookSecretEnc: null }, T0_MS);
  }

  it('reads every client\'s account and send rate at once: no balance is unlimited, no rate is null', async () => {
    const backend = await open();
    const { node } = backend;
    const acme = await client(node, 'acme');
    const beta = await client(node, 'beta');
    const gamma = await client(node, 'gamma');
    await backend.apply([topUp(beta, 10_000), { clientId: beta, kind: 'reserve', credits: 300, campaignId: 'c-1', note: null }, topUp(gamma, 50)]);
    await backend.exec('INSERT INTO client_send_rates (client_id, parts_per_second, updated_at) VALUES ($1, $2, $3)', [beta, 50, T0_MS]);
    // `credits unlimited` keeps the row (and its history) but lifts the balance.
    await backend.exec('UPDATE client_credits SET unlimited = 1 WHERE client_id = $1', [gamma]);

    expect(await node.stores.status.clientCredits()).toEqual([
      { clientId: acme, client: 'acme', unlimited: true, balance: 0, reserved: 0, available: 0, partsPerSecond: null },
      { clientId: beta, client: 'beta', unlimited: false, balance: 10_000, reserved: 300, available: 9_700, partsPerSecond: 50 },
      { clientId: gamma, client: 'gamma', unlimited: true, balance: 50, reserved: 0, available: 50, partsPerSecond: null },
    ]);
  });

  it('moves a client\'s low mark once per crossing of the threshold, and never for an unlimited client', async () => {
    const backend = await open();
    const status: Async<StatusQueries> = backend.node.stores.status;
    const acme = await client(backend.node, 'acme');
    const beta = await client(backend.node, 'beta');
    await backend.apply([topUp(beta, 1_500)]);
    expect(await status.settleLowCredits(1_000, T0_MS)).toEqual([]);

    // 600 charged: 900 available, below 1,000.
    await backend.apply([{ clientId: beta, kind: 'charge', credits: -600, campaignId: 'c-1', note: null }]);
    expect(await status.settleLowCredits(1_000, T0_MS + 1)).toEqual([{ clientId: beta, client: 'beta', available: 900, low: true }]);
    await backend.apply([{ clientId: beta, kind: 'charge', credits: -100, campaignId: 'c-1', note: null }]);
    expect(await status.settleLowCredits(1_000, T0_MS + 2)).toEqual([]);

    // Topped up to exactly the threshold: back, once.
    await backend.apply([topUp(beta, 200)]);
    expect(await status.settleLowCredits(1_000, T0_MS + 3)).toEqual([{ clientId: beta, client: 'beta', available: 1_000, low: false }]);
    expect(await status.settleLowCredits(1_000, T0_MS + 4)).toEqual([]);

    // An unlimited client (no balance, or marked unlimited) is never low.
    await backend.apply([topUp(acme, 10)]);
    await backend.exec('UPDATE client_credits SET unlimited = 1 WHERE client_id = $1', [acme]);
    expect(await status.settleLowCredits(1_000, T0_MS + 5)).toEqual([]);
  });

  it('reports a crossing to one of two nodes checking at once', async () => {
    const backend = await open();
    const other = await backend.peer();
    const beta = await client(backend.node, 'beta');
    await backend.apply([topUp(beta, 40)]);
    for (let round = 0; round < 5; round += 1) {
      // Low (40 < 100), then back (140), then low again: each crossing reported by exactly one node.
      const expectedLow = round % 2 === 0;
      if (!expectedLow) await backend.apply([topUp(beta, 100)]);
      else if (round > 0) await backend.apply([{ clientId: beta, kind: 'correction', credits: -100, campaignId: null, note: 'test' }]);
      const seen = await Promise.all([
        backend.node.stores.status.settleLowCredits(100, T0_MS + round),
        other.stores.status.settleLowCredits(100, T0_MS + round),
        backend.node.stores.status.settleLowCredits(100, T0_MS + round),
        other.stores.status.settleLowCredits(100, T0_MS + round),
      ]);
      expect(seen.flat()).toEqual([{ clientId: beta, client: 'beta', available: expectedLow ? 40 : 140, low: expectedLow }]);
    }
  });
});
