/**
 * A node's membership of a cluster on PostgreSQL. Each `smsgate serve` joins with
 * a fresh id, heartbeats about once a second and so holds a lease of about 5 s. Times are the
 * database's clock, never the node's, so nodes with skewed clocks agree on who expired.
 *
 * The lease is the fence: a node whose lease ran out may already have had its work taken by a live
 * node (reapExpired), so its next heartbeat answers 'fenced' even if its row is still there, and it
 * must drop what it holds and join again under a new id. Work it stamped with the old id is refused
 * by the stores' fenced writes.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { inTransaction, type PgClient, type PgPool } from './pool.js';

export const NODE_HEARTBEAT_MS = 1_000;
export const NODE_LEASE_MS = 5_000;

/** Milliseconds since the epoch on the database's clock. */
const DB_NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export interface NodeIdentity {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly apiPort: number | null;
}

export type HeartbeatOutcome = 'alive' | 'fenced';

/**
 * Requeues what the expired nodes held (in-flight parts, outbox leases, half-processed campaigns),
 * inside the reaper's transaction, through the client it is given. Returns how many rows it moved.
 */
export type ReapHook = (client: PgClient, expiredNodeIds: readonly string[]) => Promise<number>;

/** A live node's row as the config agreement reads it (src/cluster/config-agreement.ts). */
export interface LiveNodeSettings {
  id: string;
  startedAt: number;
  /** The JSON the node published (NULL for a node of a version before the column). */
  settings: string | null;
}

export interface ReapResult {
  nodeIds: string[];
  /** Rows each hook requeued, in the hooks' order. */
  requeued: number[];
}

export class NodeRegistry {
  private constructor(
    private readonly pool: PgPool,
    private current: NodeIdentity,
    readonly leaseMs: number,
    /** The cluster-wide settings this node publishes in its row (JSON), or null. */
    private readonly settings: string | null = null,
  ) {}

  /** Registers this process as a node with a fresh id and a lease starting now. */
  static async join(pool: PgPool, options: { apiPort?: number | null; leaseMs?: number; settings?: string } = {}): Promise<NodeRegistry> {
    const registry = new NodeRegistry(pool, NodeRegistry.newIdentity(options.apiPort ?? null), options.leaseMs ?? NODE_LEASE_MS, options.settings ?? null);
    await registry.insertSelf();
    return registry;
  }

  /** The id this node's work is stamped with now (it changes on rejoin). */
  get identity(): NodeIdentity {
    return this.current;
  }

  /**
   * Renews the lease. 'fenced' when the lease had already run out (or a reaper removed the row):
   * the caller must stop using every claim it holds, then rejoin().
   */
  async heartbeat(): Promise<HeartbeatOutcome> {
    const result = await this.pool.query(
      `UPDATE cluster_nodes SET heartbeat_at = ${DB_NOW_MS}, lease_until = ${DB_NOW_MS} + $2
        WHERE id = $1 AND lease_until >= ${DB_NOW_MS}`,
      [this.current.id, this.leaseMs],
    );
    return result.rowCount === 1 ? 'alive' : 'fenced';
  }

  /**
   * Joins again under a new id after being fenced. The old row, if no reaper has taken it yet, is
   * left alone: its lease has run out, so a live node's reap still requeues the old id's work.
   */
  async rejoin(): Promise<NodeIdentity> {
    this.current = NodeRegistry.newIdentity(this.current.apiPort);
    await this.insertSelf();
    return this.current;
  }

  /** Nodes whose lease has not run out, this one included. */
  async liveNodes(): Promise<number> {
    const result = await this.pool.query<{ live: number }>(`SELECT count(*)::int AS live FROM cluster_nodes WHERE lease_until >= ${DB_NOW_MS}`);
    return result.rows[0]?.live ?? 0;
  }

  /** The live nodes' published settings, this node's included. */
  async liveSettings(): Promise<LiveNodeSettings[]> {
    const result = await this.pool.query<{ id: string; started_at: number; settings: string | null }>(
      `SELECT id, started_at, settings FROM cluster_nodes WHERE lease_until >= ${DB_NOW_MS}`,
    );
    return result.rows.map((row) => ({ id: row.id, startedAt: Number(row.started_at), settings: row.settings }));
  }

  /**
   * Takes over the nodes whose lease ran out: in ONE transaction, locks their rows (SKIP LOCKED, so
   * two reapers never requeue the same node's work twice), runs every hook, and deletes the rows.
   * A hook that throws rolls the whole takeover back; the next reap tries again.
   */
  async reapExpired(hooks: readonly ReapHook[]): Promise<ReapResult> {
    return inTransaction(this.pool, async (client) => {
      const expired = await client.query<{ id: string }>(
        `SELECT id FROM cluster_nodes WHERE lease_until < ${DB_NOW_MS} ORDER BY id FOR UPDATE SKIP LOCKED`,
      );
      const nodeIds = expired.rows.map((r) => r.id);
      const requeued: number[] = [];
      if (nodeIds.length > 0) {
        for (const hook of hooks) requeued.push(await hook(client, nodeIds));
        await client.query('DELETE FROM cluster_nodes WHERE id = ANY($1::text[])', [nodeIds]);
      }
      return { nodeIds, requeued };
    });
  }

  /** Leaves cleanly (a graceful stop, after its work was handed back): peers need not wait for the lease. */
  async leave(): Promise<void> {
    await this.pool.query('DELETE FROM cluster_nodes WHERE id = $1', [this.current.id]);
  }

  private async insertSelf(): Promise<void> {
    const { id, host, pid, apiPort } = this.current;
    await this.pool.query(
      `INSERT INTO cluster_nodes (id, host, pid, api_port, started_at, heartbeat_at, lease_until, settings)
       VALUES ($1, $2, $3, $4, ${DB_NOW_MS}, ${DB_NOW_MS}, ${DB_NOW_MS} + $5, $6)`,
      [id, host, pid, apiPort, this.leaseMs, this.settings],
    );
  }

  private static newIdentity(apiPort: number | null): NodeIdentity {
    return { id: randomUUID(), host: hostname(), pid: process.pid, apiPort };
  }
}
