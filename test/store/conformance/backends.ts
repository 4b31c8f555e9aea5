/**
 * The two backends the store conformance suite runs every scenario against:
 * SQLite through asyncPort over a temporary file (what the SQLite composition root hands out), and
 * PostgreSQL through createPgStores over a fresh database on a throwaway server
 * (test/support/postgres-server.ts, one per test file). Both are seen only through the async
 * ports, so a scenario cannot tell them apart except by the answers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import type { CreditMovement } from '../../../src/accounts/credits.js';
import { SqliteCreditLedger } from '../../../src/store/sqlite/credit-ledger.js';
import { applyCreditMovements } from '../../../src/store/postgres/credit-ledger.js';
import { openDatabase, openStore, type SqliteDatabase } from '../../../src/store/sqlite/database.js';
import { DispatchStore } from '../../../src/store/sqlite/dispatch-store.js';
import type { WebhookStorePort } from '../../../src/store/webhook-store-port.js';
import { createPgStores } from '../../../src/store/postgres/stores.js';
import { asyncPort, type Async } from '../../../src/store/ports.js';
import { sqliteStorePorts, type StorePorts } from '../../../src/store/store-ports.js';
import * as webhookQueries from '../../../src/store/sqlite/webhook-store.js';
import { startPostgres, type PostgresServer } from '../../support/postgres-server.js';

/** The ports of everything outside the engine (StorePorts), plus the engine's stores, whole. */
export type Stores = Omit<StorePorts, 'webhooks'> & {
  readonly dispatch: Async<DispatchStore>;
  readonly webhooks: WebhookStorePort;
};

export type BackendName = 'sqlite' | 'postgres';

export interface OpenBackend {
  readonly name: BackendName;
  readonly stores: Stores;
  /** Another set of stores on the same database over their own connection(s): a second node. */
  peer(): Promise<Stores>;
  /** Writes credit movements through the backend's ledger writer (a top-up gives a client a balance). */
  applyCredits(movements: readonly CreditMovement[], nowMs: number): Promise<void>;
  /** A client's client_credits sums; undefined for a client without a balance. */
  creditSums(clientId: number): Promise<{ balance: number; reserved: number } | undefined>;
}

/**
 * webhook-store.ts's `db`-first functions bound to one connection, as the `WebhookStore` class of
 * the seam's naming rule would be, behind asyncPort's promise rules.
 */
function webhookQueriesOver(db: SqliteDatabase): WebhookStorePort {
  const bound: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const [name, value] of Object.entries(webhookQueries)) {
    if (typeof value !== 'function') continue;
    const fn = value as (db: SqliteDatabase, ...args: unknown[]) => unknown;
    bound[name] = (...args) => {
      try {
        return Promise.resolve(fn(db, ...args));
      } catch (err) {
        return Promise.reject(err);
      }
    };
  }
  return bound as unknown as WebhookStorePort;
}

/** What the SQLite composition root hands out (sqliteStorePorts), plus the engine's stores. */
function sqliteStores(db: SqliteDatabase): Stores {
  return { ...sqliteStorePorts({ db }), dispatch: asyncPort(new DispatchStore(db)), webhooks: webhookQueriesOver(db) };
}

/**
 * Declares `describe(name)` once per backend; each test calls `open()` for a fresh database on it
 * (closed after the test, also when it fails).
 */
export function describeEachBackend(name: string, body: (open: () => Promise<OpenBackend>) => void): void {
  describe.each<BackendName>(['sqlite', 'postgres'])(`${name} (%s)`, (backendName) => {
    let server: PostgresServer | undefined;
    let dir: string | undefined;
    const closers: (() => Promise<void>)[] = [];

    beforeAll(async () => {
      if (backendName === 'postgres') server = await startPostgres();
      else dir = mkdtempSync(join(tmpdir(), 'smsgate-conformance-'));
    });
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
    });
    afterAll(async () => {
      await server?.stop();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    let databases = 0;
    body(async (): Promise<OpenBackend> => {
      databases += 1;
      if (backendName === 'sqlite') {
        const path = join(dir as string, `db-${databases}.sqlite`);
        const store = await openStore({ path, synchronous: 'NORMAL' });
        closers.push(() => store.close());
        return {
          name: 'sqlite',
          stores: sqliteStores(store.db),
          async peer() {
            const other = await openStore({ path, synchronous: 'NORMAL' }, { migrate: false });
            closers.push(() => other.close());
            return sqliteStores(other.db);
          },
          async applyCredits(movements, nowMs) {
            const ledger = new SqliteCreditLedger(store.db);
            store.db.transaction(() => ledger.apply(movements, nowMs)).immediate();
          },
          async creditSums(clientId) {
            return store.db.prepare('SELECT balance, reserved FROM client_credits WHERE client_id = ?').get(clientId) as { balance: number; reserved: number } | undefined;
          },
        };
      }
      const config = { url: await (server as PostgresServer).createDatabase(), path: 'unused', synchronous: 'FULL' as const, keyFile: 'unused' };
      const database = await openDatabase(config);
      closers.push(() => database.close());
      if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
      return {
        name: 'postgres',
        stores: createPgStores(database.pool),
        async peer() {
          const other = await openDatabase(config, { migrate: false });
          closers.push(() => other.close());
          if (other.kind !== 'postgres') throw new Error('expected PostgreSQL');
          return createPgStores(other.pool);
        },
        applyCredits: (movements, nowMs) => applyCreditMovements(database.pool, movements, nowMs),
        async creditSums(clientId) {
          return (await database.pool.query<{ balance: number; reserved: number }>('SELECT balance, reserved FROM client_credits WHERE client_id = $1', [clientId])).rows[0];
        },
      };
    });
  });
}
