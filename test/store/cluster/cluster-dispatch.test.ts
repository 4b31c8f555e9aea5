/**
 * Issue 11 items 2 and 4 on a real PostgreSQL, with several connections racing as several nodes
 * would: claims never overlap (FOR UPDATE SKIP LOCKED), a node fenced out by a takeover cannot
 * overwrite, and a receipt racing its submit's message-id write on another node is always matched.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClusterDispatch } from '../../../src/store/cluster/cluster-dispatch.js';
import { NodeRegistry } from '../../../src/store/cluster/node-registry.js';
import { openDatabase, type Database } from '../../../src/store/database.js';
import { pgPoolConfig } from '../../../src/store/pg/pool.js';
import { startPostgres, type PostgresServer } from '../../support/postgres-server.js';

type PostgresDatabase = Extract<Database, { kind: 'postgres' }>;
const NOW = 1_790_000_000_000;

describe('ClusterDispatch on PostgreSQL', () => {
  let server: PostgresServer;
  let database: PostgresDatabase | undefined;
  const pools: pg.Pool[] = [];
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    // pg's pool.end() resolves before the server has seen every connection close; a fast shutdown
    // in between would terminate one mid-close (an uncaught 57P01). Wait until they are gone.
    const admin = new pg.Client({ connectionString: server.urlFor('postgres') });
    await admin.connect();
    const others = async (): Promise<number> =>
      (await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`)).rows[0]?.n ?? -1;
    const deadline = Date.now() + 10_000;
    while ((await others()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await admin.end();
    await server.stop();
  });
  afterEach(async () => {
    for (const pool of pools.splice(0)) await pool.end();
    await database?.close();
    database = undefined;
  });

  /** A migrated database with one campaign of `parts` queued one-part messages on 'carrier'. */
  async function seeded(parts: number): Promise<{ url: string; pool: pg.Pool }> {
    const url = await server.createDatabase();
    const opened = await openDatabase({ url, path: 'unused', synchronous: 'FULL', keyFile: 'unused' });
    if (opened.kind !== 'postgres') throw new Error('expected PostgreSQL');
    database = opened;
    const { pool } = opened;
    await pool.query(`INSERT INTO clients (id, name, created_at) VALUES (1, 'acme', $1)`, [NOW]);
    await pool.query(`INSERT INTO campaigns (id, client_id, state, name, sender, text, created_at) VALUES ('c1', 1, 'ready', 'n', 'Acme', 'hi', $1)`, [NOW]);
    await pool.query(
      `INSERT INTO recipients (id, campaign_id, msisdn, dispatch_state) SELECT g, 'c1', '3538600' || lpad(g::text, 5, '0'), 'dispatched' FROM generate_series(1, $1) g`,
      [parts],
    );
    await pool.query(
      `INSERT INTO message_parts (recipient_id, campaign_id, part_number, parts_total, concat_reference, transport, state, updated_at)
       SELECT g, 'c1', 1, 1, 0, 'carrier', 'queued', $2 FROM generate_series(1, $1) g`,
      [parts, NOW],
    );
    return { url, pool };
  }

  /** Another node's own pool on the same database. */
  function nodePool(url: string): pg.Pool {
    const pool = new pg.Pool(pgPoolConfig(url, 4));
    pools.push(pool);
    return pool;
  }

  it('never gives the same part to two nodes claiming at once, and every part to someone', async () => {
    const { url } = await seeded(600);
    const nodes = ['node-a', 'node-b', 'node-c'].map((id) => ({ id, store: new ClusterDispatch(nodePool(url)) }));
    const claimedBy = new Map<number, string>();
    let overlaps = 0;
    await Promise.all(
      nodes.map(async ({ id, store }) => {
        for (;;) {
          const batch = await store.claimParts(id, 'carrier', NOW, 25);
          if (batch.length === 0) return;
          for (const part of batch) {
            if (claimedBy.has(part.id)) overlaps++;
            claimedBy.set(part.id, id);
          }
        }
      }),
    );
    expect(overlaps).toBe(0);
    expect(claimedBy.size).toBe(600);
    // Every node took a share: the claims really ran side by side.
    expect(new Set(claimedBy.values()).size).toBe(3);
  });

  it('fences a node whose parts a live node took over: its late writes are refused', async () => {
    const { url, pool } = await seeded(10);
    const stalled = await NodeRegistry.join(pool, { leaseMs: 150 });
    const live = await NodeRegistry.join(pool, { leaseMs: 60_000 });
    const stalledStore = new ClusterDispatch(nodePool(url));
    const liveStore = new ClusterDispatch(nodePool(url));
    const mine = await stalledStore.claimParts(stalled.identity.id, 'carrier', NOW, 4);
    expect(mine).toHaveLength(4);
    // The stalled node misses its heartbeats; the live node takes its work over.
    await expect.poll(() => live.liveNodes(), { timeout: 5_000, interval: 25 }).toBe(1);
    const reaped = await live.reapExpired([ClusterDispatch.requeueExpiredNodes]);
    expect(reaped.nodeIds).toEqual([stalled.identity.id]);
    expect(reaped.requeued).toEqual([4]);
    const retaken = await liveStore.claimParts(live.identity.id, 'carrier', NOW, 10);
    expect(retaken.map((p) => p.id)).toEqual(expect.arrayContaining(mine.map((p) => p.id)));
    // The stalled node wakes and writes what its SMSC said: refused, the new owner's claim stands.
    const late = await stalledStore.recordAccepted(stalled.identity.id, mine.map((p, i) => ({ partId: p.id, transport: 'carrier', messageId: `late-${i}` })), NOW + 1);
    expect(late.refused).toEqual(mine.map((p) => p.id).sort((a, b) => a - b));
    const owner = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM message_parts WHERE claimed_by = $1 AND state = 'submitting'`, [live.identity.id]);
    expect(owner.rows[0]?.n).toBe(10);
    expect(await stalled.heartbeat()).toBe('fenced');
    // The new owner's writes go through.
    const written = await liveStore.recordAccepted(live.identity.id, retaken.map((p, i) => ({ partId: p.id, transport: 'carrier', messageId: `m-${i}` })), NOW + 2);
    expect(written.refused).toEqual([]);
  });

  it('matches every receipt that races its submit on another node, whichever commits first', async () => {
    const { url } = await seeded(200);
    const submitter = new ClusterDispatch(nodePool(url));
    const receiver = new ClusterDispatch(nodePool(url));
    const parts = await submitter.claimParts('node-a', 'carrier', NOW, 200);
    expect(parts).toHaveLength(200);
    let matchedOnSubmit = 0;
    let matchedOnReceipt = 0;
    // Each message's submit_sm_resp write (node a) and its receipt (node b's bind) start together.
    await Promise.all(
      parts.map(async (part) => {
        const messageId = `X${part.id}`;
        const [accepted, stored] = await Promise.all([
          submitter.recordAccepted('node-a', [{ partId: part.id, transport: 'carrier', messageId }], NOW + 1),
          receiver.storeReceipt({ transport: 'carrier', messageId, status: 'DELIVRD', final: true, errorCode: null, doneAt: null, raw: `id:${messageId} stat:DELIVRD`, receivedAtMs: NOW + 1 }),
        ]);
        expect(accepted.refused).toEqual([]);
        matchedOnSubmit += accepted.matched.length;
        if (stored.kind === 'matched') {
          matchedOnReceipt++;
          expect(stored.partId).toBe(part.id);
        }
      }),
    );
    expect(matchedOnSubmit + matchedOnReceipt).toBe(200);
    expect(await receiver.parkedReceipts('carrier')).toBe(0);
  });
});
