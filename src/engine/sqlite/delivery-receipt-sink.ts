/**
 * Where the SQLite engine queues Delivery Receipts: the webhook outbox (src/webhooks) in the
 * gateway, a recorder in tests. Called inside the engine's transaction, so a recipient's status
 * change and its webhook row are stored together or not at all.
 */
import type { SqliteDatabase } from '../../store/sqlite/database.js';
import type { DeliveryReceiptEvent } from '../../webhooks/delivery-receipt.js';

export type { DeliveryReceiptEvent } from '../../webhooks/delivery-receipt.js';

export interface DeliveryReceiptSink {
  /** Synchronous INSERT, called inside the engine's transaction; false when no row was written (no webhook URL). */
  enqueue(db: SqliteDatabase, event: DeliveryReceiptEvent, nowMs: number): boolean;
  /**
   * Many at once (multi-row INSERTs), for recipients whose client was read to have a webhook URL
   * in the same transaction. Without it each event goes through enqueue.
   */
  enqueueMany?(db: SqliteDatabase, events: readonly DeliveryReceiptEvent[], nowMs: number): void;
  /** Called after the transaction committed, when at least one receipt was enqueued. */
  wake(): void;
}

/** Queues events through the sink inside the caller's transaction: many at once when it can. */
export function enqueueDeliveryReceipts(sink: DeliveryReceiptSink, db: SqliteDatabase, events: readonly DeliveryReceiptEvent[], nowMs: number): void {
  if (events.length === 0) return;
  if (sink.enqueueMany !== undefined) sink.enqueueMany(db, events, nowMs);
  else for (const event of events) sink.enqueue(db, event, nowMs);
}
