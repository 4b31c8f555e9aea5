/**
 * Store and forward towards SMPP customers on PostgreSQL (table smpp_deliveries; the contract is
 * src/store/smpp-delivery-port.ts). Every node of a cluster may lease: a row is taken FOR UPDATE
 * SKIP LOCKED and stamped with the node's lease in one statement, so two nodes leasing at once
 * never both get it, and a row under a live lease is nobody else's until it is settled or the lease
 * runs out (its node died mid-send: another node sends it again, at least once).
 */
import { leasedDelivery, type CustomerDeliveryWrite, type LeasedDelivery, type LeasedRow, type SmppAccountPresence, type SmppDeliveryStore } from '../smpp-delivery-port.js';
import { changes, inTransaction, rows, type PgPool, type PgQueryable } from './pool.js';

/** The rows in one statement, ids ascending in the order given, on the caller's connection (inside its transaction). */
export async function insertCustomerDeliveries(db: PgQueryable, deliveries: readonly CustomerDeliveryWrite[]): Promise<void> {
  if (deliveries.length === 0) return;
  const column = <T>(pick: (r: CustomerDeliveryWrite) => T): T[] => deliveries.map(pick);
  await changes(db,
    `INSERT INTO smpp_deliveries (account_id, kind, message_id, deliver_sm, state, attempts, next_attempt_at, created_at, expires_at)
     SELECT account_id, kind, message_id, deliver_sm, 'waiting', 0, created_at, created_at, expires_at
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[])
     WITH ORDINALITY AS t(account_id, kind, message_id, deliver_sm, created_at, expires_at, n) ORDER BY n`,
    [column((r) => r.accountId), column((r) => r.kind), column((r) => r.messageId), column((r) => r.deliverSm),
      column((r) => r.createdAtMs), column((r) => r.expiresAtMs)]);
}

/**
 * The client's SMPP accounts with their receiver binds' newest heartbeat (any node of the cluster)
 * and their rows waiting: what routing an inbound message to a customer decides on. On the
 * caller's connection, in its transaction.
 */
export async function smppPresenceOf(db: PgQueryable, clientId: number): Promise<SmppAccountPresence[]> {
  const read = await rows<{ accountId: number; receiverHeartbeatAtMs: number | null; waiting: number }>(db, `SELECT a.id AS "accountId",
  (SELECT max(s.heartbeat_at) FROM smpp_server_sessions s WHERE s.account_id = a.id AND s.bind_type <> 'transmitter') AS "receiverHeartbeatAtMs",
  (SELECT count(*) FROM smpp_deliveries d WHERE d.account_id = a.id AND d.state = 'waiting') AS waiting
FROM smpp_accounts a WHERE a.client_id = $1 ORDER BY a.id`,
    [clientId]);
  return read.map((r) => ({
    accountId: Number(r.accountId), receiverHeartbeatAtMs: r.receiverHeartbeatAtMs === null ? null : Number(r.receiverHeartbeatAtMs), waiting: Number(r.waiting),
  }));
}

/** An acknowledgement is the truth even for a row that expired while it was on its way. */
const MARK_DELIVERED_SQL = `UPDATE smpp_deliveries SET state = 'delivered', done_at = $1, leased_by = NULL, lease_until = NULL
  WHERE id = ANY($2::bigint[]) AND state <> 'delivered'`;

export class PgSmppDeliveryStore implements SmppDeliveryStore {
  constructor(private readonly pool: PgPool) {}

  /**
   * One statement (with jit off for its transaction): the due rows under no live lease that no older waiting row of their message
   * precedes, locked SKIP LOCKED (another node leasing them now is passed over), stamped. A row
   * another node leased and committed meanwhile is re-checked on its new version and left out.
   * Per account along smpp_deliveries_waiting in id order, the older-row check a scalar subquery
   * (a subplan per candidate, not an anti-join over the whole backlog): a lease costs the rows it
   * reads up to the limit, not the backlog of a customer that was away.
   */
  async leaseDue(accountIds: readonly number[], nodeId: string, limit: number, nowMs: number, leaseUntilMs: number, acknowledged: readonly number[] = []): Promise<LeasedDelivery[]> {
    if (accountIds.length === 0 || limit <= 0) {
      await this.markDelivered(acknowledged, nowMs);
      return [];
    }
    const leased = await inTransaction(this.pool, async (client) => {
      if (acknowledged.length > 0) await changes(client, MARK_DELIVERED_SQL, [nowMs, acknowledged]);
      // The planner prices the per-candidate subplan at the whole backlog and would spend ~60 ms
      // compiling it (JIT) for a statement that runs in a few: not for this statement.
      await client.query('SET LOCAL jit = off');
      return rows<LeasedRow>(client,
        `WITH due AS (
           SELECT x.id FROM unnest($1::bigint[]) AS a(account_id)
           CROSS JOIN LATERAL (
             SELECT d.id FROM smpp_deliveries d
             WHERE d.account_id = a.account_id AND d.state = 'waiting' AND d.next_attempt_at <= $2 AND (d.lease_until IS NULL OR d.lease_until <= $2)
               AND (SELECT e.id FROM smpp_deliveries e
                    WHERE e.account_id = d.account_id AND e.state = 'waiting' AND e.id < d.id AND e.message_id = d.message_id LIMIT 1) IS NULL
             ORDER BY d.id LIMIT $3 FOR UPDATE OF d SKIP LOCKED
           ) x
           ORDER BY x.id LIMIT $3
         )
         UPDATE smpp_deliveries d SET leased_by = $4, lease_until = $5 FROM due WHERE d.id = due.id
         RETURNING d.id, d.account_id, d.message_id, d.deliver_sm, d.attempts`,
        [accountIds, nowMs, limit, nodeId, leaseUntilMs]);
    });
    return leased.sort((a, b) => a.id - b.id).map(leasedDelivery);
  }

  /** An acknowledgement is the truth even for a row that expired while it was on its way. */
  async markDelivered(ids: readonly number[], nowMs: number): Promise<void> {
    if (ids.length === 0) return;
    await changes(this.pool, MARK_DELIVERED_SQL, [nowMs, ids]);
  }

  async retryLater(id: number, nextAttemptAtMs: number): Promise<void> {
    await changes(this.pool,
      `UPDATE smpp_deliveries SET attempts = attempts + 1, next_attempt_at = $2, leased_by = NULL, lease_until = NULL WHERE id = $1 AND state = 'waiting'`,
      [id, nextAttemptAtMs]);
  }

  async release(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await changes(this.pool, `UPDATE smpp_deliveries SET leased_by = NULL, lease_until = NULL WHERE id = ANY($1::bigint[]) AND state = 'waiting'`, [ids]);
  }

  purgeDone(doneBeforeMs: number): Promise<number> {
    return changes(this.pool, `DELETE FROM smpp_deliveries WHERE state <> 'waiting' AND done_at < $1`, [doneBeforeMs]);
  }

  expire(nowMs: number): Promise<number> {
    return changes(this.pool,
      `UPDATE smpp_deliveries SET state = 'expired', done_at = $1, leased_by = NULL, lease_until = NULL WHERE state = 'waiting' AND expires_at <= $1`,
      [nowMs]);
  }

  async waitingBySystemId(): Promise<Map<string, number>> {
    const counts = await rows<{ system_id: string; waiting: number }>(this.pool,
      `SELECT a.system_id, count(d.id)::bigint AS waiting FROM smpp_accounts a
       LEFT JOIN smpp_deliveries d ON d.account_id = a.id AND d.state = 'waiting' GROUP BY a.system_id`);
    return new Map(counts.map((r) => [r.system_id, Number(r.waiting)]));
  }

  insert(deliveries: readonly CustomerDeliveryWrite[]): Promise<void> {
    return insertCustomerDeliveries(this.pool, deliveries);
  }
}
