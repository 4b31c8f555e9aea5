/**
 * `binds: N` is the cluster's limit. Slot k of a transport is
 * held by the node whose session holds advisory lock (transport, k); nodes take at most their fair
 * share; a node that dies or loses its connection gives its slots up at once (and is told, so it
 * unbinds); the rate cap is split over the slots.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BindSlotLocks, fairShareOfBinds, slotRatePerSecond, transportLockKey } from '../../../src/store/postgres/bind-slots.js';
import { startPostgres, type PostgresServer } from '../../support/postgres-server.js';

describe('bind slot arithmetic', () => {
  it('shares N binds as at most ceil(N / live nodes) each', () => {
    expect(fairShareOfBinds(3, 1)).toBe(3);
    expect(fairShareOfBinds(3, 2)).toBe(2);
    expect(fairShareOfBinds(3, 3)).toBe(1);
    expect(fairShareOfBinds(2, 3)).toBe(1);
    expect(fairShareOfBinds(4, 0)).toBe(4);
  });

  it("splits the cluster's maxPerSecond evenly over the slots", () => {
    expect(slotRatePerSecond(300, 3)).toBe(100);
    expect(slotRatePerSecond(50, 4)).toBe(12.5);
  });

  it('gives each transport a stable 32-bit key and different transports different keys', () => {
    expect(transportLockKey('carrier')).toBe(transportLockKey('carrier'));
    expect(transportLockKey('carrier')).not.toBe(transportLockKey('carrier2'));
    expect(Number.isInteger(transportLockKey('carrier'))).toBe(true);
    expect(Math.abs(transportLockKey('x'))).toBeLessThanOrEqual(2 ** 31);
  });
});

describe('BindSlotLocks on PostgreSQL', () => {
  let server: PostgresServer;
  let url: string;
  const open: BindSlotLocks[] = [];
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server.stop();
  });
  // Advisory locks are scoped to one database: every node of a test shares the test's database.
  beforeEach(async () => {
    url = await server.createDatabase();
  });
  afterEach(async () => {
    for (const locks of open.splice(0)) await locks.close().catch(() => undefined);
  });

  async function node(onLost: (err: Error) => void = () => undefined): Promise<BindSlotLocks> {
    const locks = await BindSlotLocks.connect(url, { onLost });
    open.push(locks);
    return locks;
  }

  it('never hands the same slot to two nodes, and never more than N in all', async () => {
    const nodes = await Promise.all([node(), node(), node(), node()]);
    // Every node greedily asks for all 3 slots at once.
    const claimed = await Promise.all(nodes.map((n) => n.claim('carrier', 3, 3)));
    const all = claimed.flat();
    expect(all).toHaveLength(3);
    expect(new Set(all)).toEqual(new Set([0, 1, 2]));
  });

  it('takes at most the fair share, and the next node takes the rest', async () => {
    const a = await node();
    const b = await node();
    expect(await a.claim('carrier', 3, fairShareOfBinds(3, 2))).toEqual([0, 1]);
    expect(await b.claim('carrier', 3, fairShareOfBinds(3, 2))).toEqual([2]);
    // Another transport's slots are independent.
    expect(await b.claim('other', 2, 2)).toEqual([0, 1]);
  });

  it('gives a released slot to the node that asks next', async () => {
    const a = await node();
    const b = await node();
    await a.claim('carrier', 2, 2);
    expect(await b.claim('carrier', 2, 1)).toEqual([]);
    await a.release('carrier', 1);
    expect(a.owned('carrier')).toEqual([0]);
    expect(await b.claim('carrier', 2, 1)).toEqual([1]);
  });

  it("frees a dead node's slots at once and tells that node it lost them", async () => {
    let lost: Error | undefined;
    const a = await node((err) => (lost = err));
    const b = await node();
    expect(await a.claim('carrier', 2, 2)).toEqual([0, 1]);
    // The database ends a's session, as a failover or a network cut would.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'smsgate bind slots' AND pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = 1)");
    } finally {
      await admin.end();
    }
    await expect.poll(() => lost).toBeInstanceOf(Error);
    expect(a.isLost).toBe(true);
    expect(a.owned('carrier')).toEqual([]);
    expect(await b.claim('carrier', 2, 2)).toEqual([0, 1]);
  });
});
