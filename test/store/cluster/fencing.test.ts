/**
 * A node that stalled past its lease (SIGSTOP, a long GC, a
 * network cut) is fenced out. A live node takes its in-flight parts over in one transaction
 * (NodeRegistry.reapExpired with requeueExpiredNodes) and may claim them itself; when the stalled
 * node wakes, every write that would end its old claims (submit_sm_resp, a temporary or permanent
 * failure) is refused, and the new owner's writes go through. Claim exclusivity and the receipt
 * race: test/store/pg-cluster-claims.test.ts.
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { NodeRegistry } from '../../../src/store/postgres/node-registry.js';
import { PgDispatchStore } from '../../../src/store/postgres/dispatch-store.js';
import { requeueExpiredNodes } from '../../../src/store/postgres/node-takeover.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';
const NOW = 1_790_000_000_000;

describe('fencing a node that lost its lease (PostgreSQL)', () => {
  const suite = usePostgresSuite();

  /** A migrated database with one campaign of `parts` queued one-part messages on 'carrier'. */
  async function seeded(parts: number): Promise<pg.Pool> {
    const { pool } = await suite.open();
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
    return pool;
  }

  it("refuses a stalled node's late writes after a live node took its parts over, and lets the new owner write", async () => {
    const pool = await seeded(6);
    const store = new PgDispatchStore(pool);
    const stalled = await NodeRegistry.join(pool, { leaseMs: 150 });
    const live = await NodeRegistry.join(pool, { leaseMs: 60_000 });
    const mine = await store.claimParts('carrier', 'c1', NOW, 3, stalled.identity.id);
    expect(mine).toHaveLength(3);
    const [a, b, c] = mine.map((p) => p.id) as [number, number, number];

    // The stalled node misses its heartbeats; the live node takes its three parts over at once.
    await expect.poll(() => live.liveNodes(), { timeout: 5_000, interval: 25 }).toBe(1);
    const reaped = await live.reapExpired([requeueExpiredNodes]);
    expect(reaped).toEqual({ nodeIds: [stalled.identity.id], requeued: [3] });
    const retaken = await store.claimParts('carrier', 'c1', NOW, 10, live.identity.id);
    expect(retaken.map((p) => p.id)).toEqual(expect.arrayContaining([a, b, c]));

    // The stalled node wakes and writes what its SMSC said about its old claims: all refused.
    expect(await store.markSubmitted(a, 'late-a', NOW + 1, stalled.identity.id)).toBe(false);
    expect(await store.requeue(b, 1, NOW + 60_000, 'ESME_RTHROTTLED', null, NOW + 1, stalled.identity.id)).toBe(false);
    expect(await store.failPart(c, 1, 'ESME_RINVDSTADR', null, NOW + 1, stalled.identity.id)).toBe(false);
    expect(await stalled.heartbeat()).toBe('fenced');
    const held = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM message_parts WHERE claimed_by = $1 AND state = 'submitting' AND message_id IS NULL`, [live.identity.id]);
    expect(held.rows[0]?.n).toBe(6);

    // The new owner's writes go through.
    expect(await store.markSubmitted(a, 'm-a', NOW + 2, live.identity.id)).toBe(true);
    expect(await store.requeue(b, 1, NOW + 60_000, 'ESME_RTHROTTLED', null, NOW + 2, live.identity.id)).toBe(true);
    expect(await store.failPart(c, 1, 'ESME_RINVDSTADR', null, NOW + 2, live.identity.id)).toBe(true);
    const states = await pool.query<{ id: number; state: string; claimed_by: string | null }>(`SELECT id, state, claimed_by FROM message_parts WHERE id = ANY($1::bigint[]) ORDER BY id`, [[a, b, c]]);
    expect(states.rows).toEqual([
      { id: a, state: 'submitted', claimed_by: null },
      { id: b, state: 'queued', claimed_by: null },
      { id: c, state: 'undelivered', claimed_by: null },
    ]);
  });

  it('keeps a single gateway (no node id) writing as before', async () => {
    const pool = await seeded(1);
    const store = new PgDispatchStore(pool);
    const [part] = await store.claimParts('carrier', 'c1', NOW, 1);
    expect(await store.markSubmitted(part?.id as number, 'm-1', NOW + 1)).toBe(true);
  });
});
