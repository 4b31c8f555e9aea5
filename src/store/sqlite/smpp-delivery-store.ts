/**
 * Store and forward towards SMPP customers on SQLite (table smpp_deliveries; the contract is
 * src/store/smpp-delivery-port.ts). Prepared statements on the gateway's one connection, each call
 * its own short transaction between the engine's group commits; insertCustomerDeliveries runs inside
 * the caller's transaction (the engine's part-change write, the inbound service's store).
 */
import { leasedDelivery, type CustomerDeliveryWrite, type LeasedDelivery, type LeasedRow, type SmppAccountPresence, type SmppDeliveryStore } from '../smpp-delivery-port.js';
import type { SqliteDatabase } from './database.js';
import { MultiRowInsert } from './multi-row-insert.js';

const INSERT_INTO = 'INSERT INTO smpp_deliveries (account_id, kind, message_id, deliver_sm, state, attempts, next_attempt_at, created_at, expires_at) VALUES';
const ROW_TUPLE = `(?, ?, ?, ?, 'waiting', 0, ?, ?, ?)`;

const insertsByDb = new WeakMap<SqliteDatabase, MultiRowInsert<CustomerDeliveryWrite>>();

/** The rows, in order (ids ascending as given: a message's receipts go out in this order), in the caller's transaction. */
export function insertCustomerDeliveries(db: SqliteDatabase, rows: readonly CustomerDeliveryWrite[]): void {
  if (rows.length === 0) return;
  let insert = insertsByDb.get(db);
  if (insert === undefined) {
    insert = new MultiRowInsert<CustomerDeliveryWrite>(db, INSERT_INTO, ROW_TUPLE, (r) => [r.accountId, r.kind, r.messageId, r.deliverSm, r.createdAtMs, r.createdAtMs, r.expiresAtMs]);
    insertsByDb.set(db, insert);
  }
  // Multi-row statements, rows in the order given: ids ascend in it.
  insert.run(rows);
}

const presenceByDb = new WeakMap<SqliteDatabase, ReturnType<SqliteDatabase['prepare']>>();

/**
 * The client's SMPP accounts with their receiver binds' newest heartbeat and their rows waiting:
 * what routing an inbound message to a customer decides on. In the caller's transaction.
 */
export function smppPresenceOf(db: SqliteDatabase, clientId: number): SmppAccountPresence[] {
  let read = presenceByDb.get(db);
  if (read === undefined) presenceByDb.set(db, (read = db.prepare(`SELECT a.id AS "accountId",
  (SELECT max(s.heartbeat_at) FROM smpp_server_sessions s WHERE s.account_id = a.id AND s.bind_type <> 'transmitter') AS "receiverHeartbeatAtMs",
  (SELECT count(*) FROM smpp_deliveries d WHERE d.account_id = a.id AND d.state = 'waiting') AS waiting
FROM smpp_accounts a WHERE a.client_id = @clientId ORDER BY a.id`)));
  return read.all({ clientId }) as SmppAccountPresence[];
}

export class SqliteSmppDeliveryStore implements SmppDeliveryStore {
  private readonly s;

  constructor(private readonly db: SqliteDatabase) {
    this.s = {
      // Due rows under no live lease, oldest first, each only when no older row of its message waits
      // (a row without a message id is its own message): a message's next row waits until the one
      // before it is settled. Read along smpp_deliveries_waiting, stopping at the limit: the cost
      // follows the rows leased, not the backlog of a customer that was away.
      due: db.prepare<{ accounts: string; nowMs: number; limit: number }, LeasedRow>(
        `SELECT d.id, d.account_id, d.message_id, d.deliver_sm, d.attempts FROM smpp_deliveries d
         WHERE d.account_id IN (SELECT value FROM json_each(@accounts)) AND d.state = 'waiting'
           AND d.next_attempt_at <= @nowMs AND (d.lease_until IS NULL OR d.lease_until <= @nowMs)
           AND NOT EXISTS (SELECT 1 FROM smpp_deliveries e
                           WHERE e.account_id = d.account_id AND e.state = 'waiting' AND e.id < d.id AND e.message_id = d.message_id)
         ORDER BY d.id LIMIT @limit`,
      ),
      lease: db.prepare<{ ids: string; nodeId: string; leaseUntilMs: number }>(
        `UPDATE smpp_deliveries SET leased_by = @nodeId, lease_until = @leaseUntilMs WHERE id IN (SELECT value FROM json_each(@ids))`,
      ),
      // An acknowledgement is the truth even for a row that expired while it was on its way.
      delivered: db.prepare<{ ids: string; nowMs: number }>(
        `UPDATE smpp_deliveries SET state = 'delivered', done_at = @nowMs, leased_by = NULL, lease_until = NULL
         WHERE id IN (SELECT value FROM json_each(@ids)) AND state <> 'delivered'`,
      ),
      retry: db.prepare<{ id: number; nextAttemptAtMs: number }>(
        `UPDATE smpp_deliveries SET attempts = attempts + 1, next_attempt_at = @nextAttemptAtMs, leased_by = NULL, lease_until = NULL
         WHERE id = @id AND state = 'waiting'`,
      ),
      release: db.prepare<{ ids: string }>(
        `UPDATE smpp_deliveries SET leased_by = NULL, lease_until = NULL WHERE id IN (SELECT value FROM json_each(@ids)) AND state = 'waiting'`,
      ),
      purge: db.prepare<{ beforeMs: number }>(`DELETE FROM smpp_deliveries WHERE state <> 'waiting' AND done_at < @beforeMs`),
      expire: db.prepare<{ nowMs: number }>(
        `UPDATE smpp_deliveries SET state = 'expired', done_at = @nowMs, leased_by = NULL, lease_until = NULL WHERE state = 'waiting' AND expires_at <= @nowMs`,
      ),
      waiting: db.prepare<[], { system_id: string; waiting: number }>(
        `SELECT a.system_id, count(d.id) AS waiting FROM smpp_accounts a LEFT JOIN smpp_deliveries d ON d.account_id = a.id AND d.state = 'waiting'
         GROUP BY a.system_id`,
      ),
    };
  }

  leaseDue(accountIds: readonly number[], nodeId: string, limit: number, nowMs: number, leaseUntilMs: number, acknowledged: readonly number[] = []): Promise<LeasedDelivery[]> {
    if (accountIds.length === 0 || limit <= 0) return this.markDelivered(acknowledged, nowMs).then(() => []);
    const leased = this.db.transaction(() => {
      if (acknowledged.length > 0) this.s.delivered.run({ ids: JSON.stringify(acknowledged), nowMs });
      const due = this.s.due.all({ accounts: JSON.stringify(accountIds), nowMs, limit });
      if (due.length > 0) this.s.lease.run({ ids: JSON.stringify(due.map((d) => d.id)), nodeId, leaseUntilMs });
      return due;
    })();
    return Promise.resolve(leased.map(leasedDelivery));
  }

  markDelivered(ids: readonly number[], nowMs: number): Promise<void> {
    if (ids.length > 0) this.s.delivered.run({ ids: JSON.stringify(ids), nowMs });
    return Promise.resolve();
  }

  retryLater(id: number, nextAttemptAtMs: number): Promise<void> {
    this.s.retry.run({ id, nextAttemptAtMs });
    return Promise.resolve();
  }

  release(ids: readonly number[]): Promise<void> {
    if (ids.length > 0) this.s.release.run({ ids: JSON.stringify(ids) });
    return Promise.resolve();
  }

  expire(nowMs: number): Promise<number> {
    return Promise.resolve(this.s.expire.run({ nowMs }).changes);
  }

  purgeDone(doneBeforeMs: number): Promise<number> {
    return Promise.resolve(this.s.purge.run({ beforeMs: doneBeforeMs }).changes);
  }

  waitingBySystemId(): Promise<Map<string, number>> {
    return Promise.resolve(new Map(this.s.waiting.all().map((r) => [r.system_id, r.waiting])));
  }

  insert(rows: readonly CustomerDeliveryWrite[]): Promise<void> {
    this.db.transaction(() => insertCustomerDeliveries(this.db, rows))();
    return Promise.resolve();
  }
}
