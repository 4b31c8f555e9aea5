/**
 * The submit intake's store on both backends for one test file: a fresh SQLite file per test, or a
 * fresh migrated database on the file's throwaway PostgreSQL 15 (test/support/postgres-suite.ts),
 * with what a scenario seeds (a client, its SMPP account, its credits through the ledger writer)
 * and plain reads of the rows the intake leaves. The same scenario runs against each.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import type { PgPool } from '../../../src/store/postgres/pool.js';
import { PgCreditStore } from '../../../src/store/postgres/credit-store.js';
import { PgSmppIntakeStore } from '../../../src/store/postgres/smpp-intake-store.js';
import { asyncPort } from '../../../src/store/ports.js';
import type { SmppIntakeStore } from '../../../src/store/smpp-intake-port.js';
import type { CreditStore } from '../../../src/store/credit-store-port.js';
import { SqliteCreditStore } from '../../../src/store/sqlite/credit-store.js';
import { openStore, type Store } from '../../../src/store/sqlite/database.js';
import { SqliteSmppIntakeStore } from '../../../src/store/sqlite/smpp-intake-store.js';
import { usePostgresSuite, type PostgresSuite } from '../../support/postgres-suite.js';

export type IntakeBackendName = 'sqlite' | 'postgres';

export interface IntakeRig {
  readonly backend: IntakeBackendName;
  readonly store: SmppIntakeStore;
  /** `?` placeholders on both backends. */
  sql<T>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** A client with `credits` (through the ledger writer), or unlimited when undefined; its id and name. */
  seedClient(credits?: number): Promise<{ id: number; name: string }>;
  /** An SMPP account of the client; its id. */
  seedAccount(clientId: number): Promise<number>;
  /** The client's client_credits sums and its ledger's sums by kind. */
  credits(clientId: number): Promise<{ balance: number; reserved: number; ledgerReserved: number; ledgerBalance: number }>;
}

function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

function makeRig(backend: IntakeBackendName, store: SmppIntakeStore, credits: CreditStore, sql: IntakeRig['sql']): IntakeRig {
  return {
    backend,
    store,
    sql,
    async seedClient(amount) {
      const name = `client-${randomUUID().slice(0, 8)}`;
      await sql('INSERT INTO clients (name, active, created_at) VALUES (?, 1, ?)', [name, Date.now()]);
      const [found] = await sql<{ id: number }>('SELECT id FROM clients WHERE name = ?', [name]);
      if (amount !== undefined) await credits.add(name, amount, 'seed', Date.now());
      return { id: Number(found!.id), name };
    },
    async seedAccount(clientId) {
      const systemId = `esme-${randomUUID().slice(0, 8)}`;
      await sql(`INSERT INTO smpp_accounts (system_id, client_id, password_hash, max_binds, allow_ips, created_at, updated_at)
        VALUES (?, ?, 'hash', NULL, '[]', ?, ?)`, [systemId, clientId, Date.now(), Date.now()]);
      const [found] = await sql<{ id: number }>('SELECT id FROM smpp_accounts WHERE system_id = ?', [systemId]);
      return Number(found!.id);
    },
    async credits(clientId) {
      const [sums] = await sql<{ balance: number; reserved: number }>('SELECT balance, reserved FROM client_credits WHERE client_id = ?', [clientId]);
      const [ledger] = await sql<{ reserved: number | null; balance: number | null }>(
        `SELECT SUM(CASE WHEN kind IN ('reserve', 'release') THEN credits ELSE 0 END) AS reserved,
           SUM(CASE WHEN kind IN ('top-up', 'correction', 'charge') THEN credits ELSE 0 END) AS balance FROM credit_ledger WHERE client_id = ?`, [clientId]);
      return { balance: Number(sums?.balance ?? 0), reserved: Number(sums?.reserved ?? 0), ledgerReserved: Number(ledger?.reserved ?? 0), ledgerBalance: Number(ledger?.balance ?? 0) };
    },
  };
}

export function sqliteRig(store: Store): IntakeRig {
  const sql = async <T>(text: string, params: readonly unknown[] = []): Promise<T[]> => {
    const statement = store.db.prepare(text);
    if (statement.reader) return statement.all(...params) as T[];
    statement.run(...params);
    return [];
  };
  return makeRig('sqlite', asyncPort(new SqliteSmppIntakeStore(store.db)), asyncPort(new SqliteCreditStore(store.db)), sql);
}

export function postgresRig(pool: PgPool): IntakeRig {
  const sql = async <T>(text: string, params: readonly unknown[] = []): Promise<T[]> => (await pool.query(numbered(text), [...params])).rows as T[];
  return makeRig('postgres', new PgSmppIntakeStore(pool), new PgCreditStore(pool), sql);
}

/** describe(name) once per backend; `open()` gives a fresh, migrated database on it. */
export function describeIntakeBackends(name: string, body: (open: () => Promise<IntakeRig>, backend: IntakeBackendName, pg: PostgresSuite) => void): void {
  const pg = usePostgresSuite();
  describe.each<IntakeBackendName>(['sqlite', 'postgres'])(`${name} (%s)`, (backend) => {
    let dir: string | undefined;
    const closers: (() => Promise<void>)[] = [];
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'smsgate-intake-'));
    });
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
    });
    afterAll(() => {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });
    body(async () => {
      if (backend === 'postgres') return postgresRig((await pg.open()).pool);
      const store = await openStore({ path: join(dir as string, `${randomUUID()}.sqlite`), synchronous: 'FULL' });
      closers.push(() => store.close());
      return sqliteRig(store);
    }, backend, pg);
  });
}
