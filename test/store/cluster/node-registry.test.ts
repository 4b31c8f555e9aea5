/**
 * Nodes heartbeat into cluster_nodes and hold a lease; a live
 * node takes over an expired node's work in one transaction (and only one reaper does); a node whose
 * lease ran out is fenced at its next heartbeat and rejoins under a new id.
 */
import { describe, expect, it } from 'vitest';
import { NodeRegistry, type ReapHook } from '../../../src/store/postgres/node-registry.js';
import { usePostgresSuite, type PostgresDatabase } from '../../support/postgres-suite.js';

describe('NodeRegistry on PostgreSQL', () => {
  const suite = usePostgresSuite();
  const migrated = (): Promise<PostgresDatabase> => suite.open();

  it('counts the nodes that joined and forgets one that left', async () => {
    const { pool } = await migrated();
    const a = await NodeRegistry.join(pool, { apiPort: 8080 });
    const b = await NodeRegistry.join(pool, { apiPort: 8090 });
    expect(a.identity.id).not.toBe(b.identity.id);
    expect(await a.liveNodes()).toBe(2);
    await b.leave();
    expect(await a.liveNodes()).toBe(1);
    expect(await a.heartbeat()).toBe('alive');
  });

  it("lets a live node take an expired node's work in one transaction, once, and fences the expired node", async () => {
    const { pool } = await migrated();
    const stalled = await NodeRegistry.join(pool, { leaseMs: 200 });
    const live = await NodeRegistry.join(pool, { leaseMs: 60_000 });
    const other = await NodeRegistry.join(pool, { leaseMs: 60_000 });
    const seen: string[][] = [];
    const hook: ReapHook = async (client, ids) => {
      // Runs inside the reaper's transaction: the expired row is still there and locked.
      const inside = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM cluster_nodes WHERE id = ANY($1::text[])', [ids]);
      seen.push([...ids]);
      return inside.rows[0]?.n ?? -1;
    };
    // Nothing to reap while the lease holds.
    expect((await live.reapExpired([hook])).nodeIds).toEqual([]);
    await expect.poll(() => live.liveNodes(), { timeout: 5_000, interval: 50 }).toBe(2);
    // Two reapers at once: the expired node is taken over exactly once.
    const [r1, r2] = await Promise.all([live.reapExpired([hook]), other.reapExpired([hook])]);
    expect([...r1.nodeIds, ...r2.nodeIds]).toEqual([stalled.identity.id]);
    expect([...r1.requeued, ...r2.requeued]).toEqual([1]);
    expect(seen).toEqual([[stalled.identity.id]]);
    // The stalled node wakes up: fenced, then back under a new id.
    const oldId = stalled.identity.id;
    expect(await stalled.heartbeat()).toBe('fenced');
    const rejoined = await stalled.rejoin();
    expect(rejoined.id).not.toBe(oldId);
    expect(await live.liveNodes()).toBe(3);
  });

  it('is fenced once its lease ran out even before any reaper came', async () => {
    const { pool } = await migrated();
    const node = await NodeRegistry.join(pool, { leaseMs: 100 });
    const watcher = await NodeRegistry.join(pool);
    await expect.poll(() => watcher.liveNodes(), { timeout: 5_000, interval: 25 }).toBe(1);
    expect(await node.heartbeat()).toBe('fenced');
  });

  it('rolls the takeover back when a hook fails, so the next reap tries again', async () => {
    const { pool } = await migrated();
    const expired = await NodeRegistry.join(pool, { leaseMs: 100 });
    const live = await NodeRegistry.join(pool);
    await expect.poll(() => live.liveNodes(), { timeout: 5_000, interval: 25 }).toBe(1);
    await expect(live.reapExpired([async () => Promise.reject(new Error('requeue refused'))])).rejects.toThrow('requeue refused');
    const retried = await live.reapExpired([async () => 0]);
    expect(retried.nodeIds).toEqual([expired.identity.id]);
  });
});
