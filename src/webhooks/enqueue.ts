/**
 * Queues one Delivery Receipt for a recipient status change. Synchronous and transaction-friendly:
 * the engine calls it inside the same transaction that changes the recipient's status, so the
 * outbox row exists (on disk) before any attempt is made and a crash cannot separate the two.
 */
import type { SqliteDatabase } from '../store/sqlite/database.js';
import { insertOutboxRow, insertOutboxRows } from '../store/sqlite/webhook-store.js';
import { serializeDeliveryReceipt, type DeliveryReceiptEvent } from './delivery-receipt.js';

/**
 * Inserts the event, due at nowMs, with its body serialised once. Returns false (and inserts
 * nothing) when the client has no webhook URL configured. Throws WEBHOOK_FIELD_INVALID for a Status
 * or ClientReference over 30 characters. Call WebhookSender.wake() after the transaction commits.
 */
export function enqueueDeliveryReceipt(db: SqliteDatabase, ev: DeliveryReceiptEvent, nowMs: number): boolean {
  const body = serializeDeliveryReceipt(ev);
  return insertOutboxRow(db, { clientId: ev.clientId, recipientId: ev.recipientId, body, nowMs });
}

/**
 * Inserts many events at once (multi-row INSERTs), for clients the caller has just read to have a
 * webhook URL in the same transaction. Throws WEBHOOK_FIELD_INVALID as enqueueDeliveryReceipt does,
 * before anything is inserted.
 */
export function enqueueDeliveryReceipts(db: SqliteDatabase, events: readonly DeliveryReceiptEvent[], nowMs: number): void {
  const rows = events.map((ev) => ({ clientId: ev.clientId, recipientId: ev.recipientId, body: serializeDeliveryReceipt(ev), nowMs }));
  insertOutboxRows(db, rows);
}
