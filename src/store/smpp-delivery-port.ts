/**
 * Store and forward towards SMPP customers (table smpp_deliveries): what the engine and the
 * inbound service write, and what the delivery sender leases, sends and settles. One
 * implementation per backend (src/store/sqlite/smpp-delivery-store.ts,
 * src/store/postgres/smpp-delivery-store.ts), the same contract. The store keeps each deliver_sm
 * as the JSON text it is given (src/smpp-server/contracts.ts DeliverSmFields, written and read by
 * src/smpp-server): it never looks inside, as the webhook outbox never looks inside a body.
 */
import type { SmppDeliveryRow } from './entities.js';

/** One deliver_sm to store, written in the commit of what caused it (a receipt, an inbound message). */
export interface CustomerDeliveryWrite {
  accountId: number;
  kind: 'receipt' | 'inbound';
  /**
   * The key rows go in order by: a receipt's smsgate message id (the campaign id), an inbound
   * message's id (its parts in order). Rows of one key are sent one after the other, oldest first.
   */
  messageId: string;
  /** The deliver_sm's fields as JSON (serializeDeliverSm). */
  deliverSm: string;
  createdAtMs: number;
  /** Past this a waiting row is expired, never sent (receiptRetentionHours). */
  expiresAtMs: number;
}

/** A waiting row leased to this node. */
export interface LeasedDelivery {
  id: number;
  accountId: number;
  messageId: string | null;
  /** The deliver_sm's fields as JSON, as written. */
  deliverSm: string;
  attempts: number;
}

/** What routing an inbound message to a customer decides on, per SMPP account of the routed client. */
export interface SmppAccountPresence {
  accountId: number;
  /** The newest heartbeat of its receiver and transceiver sessions on any node; null when none is bound. */
  receiverHeartbeatAtMs: number | null;
  /** Its smpp_deliveries rows still waiting. */
  waiting: number;
}

/** The columns a lease returns, as both backends read them. */
export type LeasedRow = Pick<SmppDeliveryRow, 'id' | 'account_id' | 'message_id' | 'deliver_sm' | 'attempts'>;

export function leasedDelivery(row: LeasedRow): LeasedDelivery {
  return { id: row.id, accountId: row.account_id, messageId: row.message_id, deliverSm: row.deliver_sm, attempts: row.attempts };
}

export interface SmppDeliveryStore {
  /**
   * Leases up to `limit` due rows (next_attempt_at <= nowMs) of these accounts until
   * `leaseUntilMs`: per message id only its oldest waiting row (so a message's receipts go out in
   * order: a later one waits until the earlier is delivered or expired), and only a row no other
   * node holds under a live lease. Oldest first. On PostgreSQL two nodes leasing at once never get
   * the same row (FOR UPDATE SKIP LOCKED).
   * `acknowledged`: rows the customer acknowledged since the last write, marked delivered first in
   * the same commit (as markDelivered would), so a message's next row is due in this very lease and
   * a busy sender commits once a pass instead of twice.
   */
  leaseDue(accountIds: readonly number[], nodeId: string, limit: number, nowMs: number, leaseUntilMs: number, acknowledged?: readonly number[]): Promise<LeasedDelivery[]>;
  /** The customer acknowledged them (deliver_sm_resp status 0). */
  markDelivered(ids: readonly number[], nowMs: number): Promise<void>;
  /** Refused or lost: attempts + 1, the lease released, due again at nextAttemptAtMs. */
  retryLater(id: number, nextAttemptAtMs: number): Promise<void>;
  /** Leased rows this node did not send after all (no free window slot): lease released, attempts unchanged. */
  release(ids: readonly number[]): Promise<void>;
  /** Waiting rows past their expires_at become 'expired'; returns how many. */
  expire(nowMs: number): Promise<number>;
  /** Delivered and expired rows settled before this instant are deleted (the table keeps what may still be looked at); returns how many. */
  purgeDone(doneBeforeMs: number): Promise<number>;
  /** Waiting rows per account system_id, every SMPP account included (0 when none wait). */
  waitingBySystemId(): Promise<Map<string, number>>;
  /** Inserts rows (outside an engine commit: the inbound service's own transaction is the caller's). */
  insert(rows: readonly CustomerDeliveryWrite[]): Promise<void>;
}
