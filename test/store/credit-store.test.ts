/**
 * CreditStore (src/store/credit-store-port.ts) on a real SQLite file and a real PostgreSQL: add
 * (top-up, negative correction), set, unlimited, history (newest first, limited), setRate, an
 * unknown client (CLIENT_NOT_FOUND, nothing written), and balance and reserved equal to the
 * ledger's sums by the kind rule after a sequence of operator changes mixed with the reservations,
 * charges and releases the gateway writes, also when changes race from two connections.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { chargeOf, releaseOf, type CreditMovement, type Reservation } from '../../src/accounts/credits.js';
import { isGatewayError } from '../../src/common/errors.js';
import type { CreditStore } from '../../src/store/credit-store-port.js';
import { applyCreditMovements, reserveCredits } from '../../src/store/postgres/credit-ledger.js';
import { inTransaction, rows } from '../../src/store/postgres/pool.js';
import { createPgStores } from '../../src/store/postgres/stores.js';
import { SqliteCreditLedger } from '../../src/store/sqlite/credit-ledger.js';
import { openStore } from '../../src/store/sqlite/database.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';
import { usePostgresSuite, type PostgresDatabase } from '../support/postgres-suite.js';

const T0 = 1_766_000_000_000;

interface Sums { balance: number; reserved: number }

/** A backend as the test drives it: the port under test, the gateway's ledger writes, and raw reads. */
interface Backend {
  credits: CreditStore;
  /** The same database over another connection (pool): a second command, or another node. */
  peer(): Promise<CreditStore>;
  insertClient(name: string): Promise<number>;
  /** A campaign's reservation, as acceptance writes it. */
  reserve(clientId: number, campaignId: string, credits: number): Promise<Reservation>;
  /** Charges and releases, as the engine writes them. */
  apply(movements: CreditMovement[]): Promise<void>;
  /** The stored sums (undefined: no row) and the ledger's sums by the kind rule. */
  sums(clientId: number): Promise<{ stored: Sums | undefined; ledger: Sums }>;
  ledgerRows(): Promise<number>;
  rate(clientId: number): Promise<number | undefined>;
}

const LEDGER_SUMS = `SELECT COALESCE(SUM(CASE WHEN kind IN ('top-up', 'correction', 'charge') THEN credits ELSE 0 END), 0) AS balance,
  COALESCE(SUM(CASE WHEN kind IN ('reserve', 'release') THEN credits ELSE 0 END), 0) AS reserved FROM credit_ledger WHERE client_id = `;

const suite = usePostgresSuite();
const dir = mkdtempSync(join(tmpdir(), 'smsgate-credit-store-'));
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
async function sqliteBackend(): Promise<Backend> {
  const path = join(dir, `credits-${++files}.sqlite`);
  const store = await openStore({ path, synchronous: 'NORMAL' });
  closers.push(() => store.close());
  const { db } = store;
  const ports = sqliteStorePorts(store);
  const ledger = new SqliteCreditLedger(db);
  return {
    credits: ports.credits,
    async peer() {
      const other = await openStore({ path, synchronous: 'NORMAL' }, { migrate: false });
      closers.push(() => other.close());
      return sqliteStorePorts(other).credits;
    },
    insertClient: (name) => ports.auth.insertClient({ name, webhookUrl: null, webhookSecretEnc: null }, T0),
    reserve: async (clientId, campaignId, credits) => db.transaction(() => ledger.reserve(clientId, campaignId, credits, T0)).immediate(),
    apply: async (movements) => db.transaction(() => ledger.apply(movements, T0)).immediate(),
    async sums(clientId) {
      return {
        stored: db.prepare<[number], Sums>('SELECT balance, reserved FROM client_credits WHERE client_id = ?').get(clientId),
        ledger: db.prepare<[number], Sums>(`${LEDGER_SUMS} ?`).get(clientId) as Sums,
      };
    },
    ledgerRows: async () => (db.prepare('SELECT COUNT(*) AS n FROM credit_ledger').get() as { n: number }).n,
    rate: async (clientId) => db.prepare<[number], { parts_per_second: number }>('SELECT parts_per_second FROM client_send_rates WHERE client_id = ?').get(clientId)?.parts_per_second,
  };
}

async function postgresBackend(): Promise<Backend> {
  // Two pools on one database: the second is another command's, or another node's.
  const [database, second] = await suite.openNodes(2) as [PostgresDatabase, PostgresDatabase];
  const { pool } = database;
  const stores = createPgStores(pool);
  return {
    credits: stores.credits,
    peer: async () => createPgStores(second.pool).credits,
    insertClient: (name) => stores.auth.insertClient({ name, webhookUrl: null, webhookSecretEnc: null }, T0),
    reserve: (clientId, campaignId, credits) => inTransaction(pool, (c) => reserveCredits(c, clientId, campaignId, credits, T0)),
    apply: (movements) => inTransaction(pool, (c) => applyCreditMovements(c, movements, T0)),
    async sums(clientId) {
      const [stored] = await rows<Sums>(pool, 'SELECT balance, reserved FROM client_credits WHERE client_id = $1', [clientId]);
      // SUM of a bigint is a numeric, which pg hands over as text: cast back.
      const [ledger] = await rows<Sums>(pool, `SELECT balance::bigint AS balance, reserved::bigint AS reserved FROM (${LEDGER_SUMS} $1) s`, [clientId]);
      return { stored, ledger: ledger as Sums };
    },
    ledgerRows: async () => (await rows<{ n: number }>(pool, 'SELECT COUNT(*)::int AS n FROM credit_ledger'))[0]?.n ?? -1,
    rate: async (clientId) => (await rows<{ parts_per_second: number }>(pool, 'SELECT parts_per_second FROM client_send_rates WHERE client_id = $1', [clientId]))[0]?.parts_per_second,
  };
}

async function clientNotFound(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    if (isGatewayError(err, 'CLIENT_NOT_FOUND')) return err.message;
    throw err;
  }
  throw new Error('the call succeeded');
}

describe.each([
  ['sqlite', sqliteBackend],
  ['postgres', postgresBackend],
] as const)('CreditStore on %s', (_name, open) => {
  it('adds a top-up and a negative correction, sets a balance, and shows history newest first, limited', async () => {
    const backend = await open();
    const acme = await backend.insertClient('acme');
    const { credits } = backend;
    expect(await credits.account('acme')).toEqual({ clientId: acme, client: 'acme', unlimited: true, balance: 0, reserved: 0, available: 0 });
    expect(await credits.add('acme', 100, 'invoice 7', T0 + 1)).toEqual({ clientId: acme, client: 'acme', unlimited: false, balance: 100, reserved: 0, available: 100 });
    expect(await credits.add('acme', -30, null, T0 + 2)).toMatchObject({ unlimited: false, balance: 70, available: 70 });
    expect(await credits.set('acme', 50, T0 + 3)).toMatchObject({ unlimited: false, balance: 50, available: 50 });
    // Already 50: no row.
    expect(await credits.set('acme', 50, T0 + 4)).toMatchObject({ balance: 50 });
    expect(await credits.history('acme', 100)).toEqual([
      { atMs: T0 + 3, kind: 'correction', credits: -20, campaignId: null, note: 'set to 50' },
      { atMs: T0 + 2, kind: 'correction', credits: -30, campaignId: null, note: null },
      { atMs: T0 + 1, kind: 'top-up', credits: 100, campaignId: null, note: 'invoice 7' },
    ]);
    expect((await credits.history('acme', 2)).map((e) => e.credits)).toEqual([-20, -30]);
    expect(await backend.ledgerRows()).toBe(3);
  });

  it('unlimited keeps the sums and writes no row; add and set end it', async () => {
    const backend = await open();
    const acme = await backend.insertClient('acme');
    const globex = await backend.insertClient('globex');
    const { credits } = backend;
    await credits.add('acme', 40, null, T0);
    expect(await backend.reserve(acme, 'c-1', 25)).toEqual({ outcome: 'reserved', credits: 25 });
    expect(await credits.unlimited('acme', T0 + 1)).toMatchObject({ unlimited: true, balance: 40, reserved: 25, available: 15 });
    expect(await backend.ledgerRows()).toBe(2);
    // An unlimited client reserves nothing; what it had reserved drains as it is charged.
    expect(await backend.reserve(acme, 'c-2', 1000)).toEqual({ outcome: 'unlimited' });
    await backend.apply(chargeOf(acme, 'c-1', 25));
    expect(await credits.account('acme')).toMatchObject({ unlimited: true, balance: 15, reserved: 0 });
    expect(await credits.add('acme', 10, null, T0 + 2)).toMatchObject({ unlimited: false, balance: 25 });
    await credits.unlimited('acme', T0 + 3);
    expect(await credits.set('acme', 25, T0 + 4)).toMatchObject({ unlimited: false, balance: 25 });
    // A client without a row: unlimited makes it no less unlimited, set 0 gives it a zero balance.
    expect(await credits.unlimited('globex', T0)).toEqual({ clientId: globex, client: 'globex', unlimited: true, balance: 0, reserved: 0, available: 0 });
    expect(await credits.set('globex', 0, T0)).toEqual({ clientId: globex, client: 'globex', unlimited: false, balance: 0, reserved: 0, available: 0 });
    expect(await backend.reserve(globex, 'c-3', 1)).toEqual({ outcome: 'short', needed: 1, available: 0 });
    expect(await credits.history('globex', 100)).toEqual([]);
  });

  it('refuses an unknown client with CLIENT_NOT_FOUND, writing nothing', async () => {
    const backend = await open();
    await backend.insertClient('acme');
    const { credits } = backend;
    for (const call of [() => credits.account('nobody'), () => credits.add('nobody', 5, null, T0), () => credits.set('nobody', 5, T0),
      () => credits.unlimited('nobody', T0), () => credits.history('nobody', 10), () => credits.setRate('nobody', 5, T0)]) {
      expect(await clientNotFound(call())).toBe('no client named "nobody"');
    }
    expect(await backend.ledgerRows()).toBe(0);
  });

  it('sets, changes and removes a send rate', async () => {
    const backend = await open();
    const acme = await backend.insertClient('acme');
    await backend.credits.setRate('acme', 50, T0);
    expect(await backend.rate(acme)).toBe(50);
    await backend.credits.setRate('acme', 7, T0 + 1);
    expect(await backend.rate(acme)).toBe(7);
    await backend.credits.setRate('acme', null, T0 + 2);
    expect(await backend.rate(acme)).toBeUndefined();
    await backend.credits.setRate('acme', null, T0 + 3);
    expect(await backend.rate(acme)).toBeUndefined();
  });

  it('keeps balance and reserved equal to the ledger sums through operator changes, reservations, charges and releases', async () => {
    const backend = await open();
    const acme = await backend.insertClient('acme');
    const { credits } = backend;
    const check = async (expected: Sums): Promise<void> => {
      const { stored, ledger } = await backend.sums(acme);
      expect(stored).toEqual(ledger);
      expect(stored).toEqual(expected);
      const account = await credits.account('acme');
      expect(account.available).toBe(expected.balance - expected.reserved);
    };
    await credits.add('acme', 1000, 'opening', T0);
    await check({ balance: 1000, reserved: 0 });
    expect(await backend.reserve(acme, 'c-1', 300)).toEqual({ outcome: 'reserved', credits: 300 });
    await check({ balance: 1000, reserved: 300 });
    // 120 credits of parts accepted, 30 ended unaccepted, 10 skipped at processing.
    await backend.apply([...chargeOf(acme, 'c-1', 120), ...releaseOf(acme, 'c-1', 30), ...releaseOf(acme, 'c-1', 10)]);
    await check({ balance: 880, reserved: 140 });
    await credits.add('acme', -80, 'refund of a duplicate top-up', T0 + 1);
    await check({ balance: 800, reserved: 140 });
    await credits.set('acme', 500, T0 + 2);
    await check({ balance: 500, reserved: 140 });
    expect(await backend.reserve(acme, 'c-2', 361)).toEqual({ outcome: 'short', needed: 361, available: 360 });
    expect(await backend.reserve(acme, 'c-2', 360)).toEqual({ outcome: 'reserved', credits: 360 });
    await check({ balance: 500, reserved: 500 });
    await credits.unlimited('acme', T0 + 3);
    await backend.apply([...chargeOf(acme, 'c-1', 140), ...chargeOf(acme, 'c-2', 200), ...releaseOf(acme, 'c-2', 160)]);
    await check({ balance: 160, reserved: 0 });
    await credits.set('acme', 0, T0 + 4);
    await check({ balance: 0, reserved: 0 });
    const kinds = (await credits.history('acme', 100)).map((e) => e.kind);
    expect(kinds[0]).toBe('correction');
    expect(kinds.at(-1)).toBe('top-up');
    expect(new Set(kinds)).toEqual(new Set(['top-up', 'reserve', 'release', 'charge', 'correction']));
  });

  it('keeps the sums equal to the ledger when changes race from two connections', async () => {
    const backend = await open();
    const acme = await backend.insertClient('acme');
    const other = await backend.peer();
    await backend.credits.add('acme', 1000, null, T0);
    await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? backend.credits : other).add('acme', 1, `+1 #${i}`, T0 + i)),
      ...Array.from({ length: 10 }, (_, i) => backend.reserve(acme, `c-${i}`, 10)),
      other.set('acme', 2000, T0 + 50),
      ...Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? other : backend.credits).add('acme', -1, null, T0 + 100 + i)),
    ]);
    const { stored, ledger } = await backend.sums(acme);
    expect(stored).toEqual(ledger);
    expect(stored?.reserved).toBe(100);
    const history = await backend.credits.history('acme', 1000);
    expect(history.filter((e) => e.kind === 'top-up')).toHaveLength(21);
    expect(history.filter((e) => e.kind === 'reserve')).toHaveLength(10);
    // Whatever order they committed in, the set made the balance 2000 at its moment: what moved it after
    // that is the rows written after it (newest first, before the set's row).
    const setAt = history.findIndex((e) => e.note === 'set to 2000');
    const after = history.slice(0, setAt).filter((e) => e.kind === 'top-up' || e.kind === 'correction').reduce((sum, e) => sum + e.credits, 0);
    expect(stored?.balance).toBe(2000 + after);
  });
});
