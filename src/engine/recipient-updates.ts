/**
 * Applies a part's change to its recipient inside the caller's transaction: recomputes the
 * recipient status from all its parts (see recipient-status.ts) and, when it changed, writes it
 * and enqueues one Delivery Receipt webhook in the same transaction, so a status change and its
 * webhook are stored together or not at all.
 */
import type { Logger } from '../log.js';
import type { SqliteDatabase } from '../store/database.js';
import type { DispatchStore } from '../store/dispatch-store.js';
import { nextRecipientStatus, type StatusTrigger } from './recipient-status.js';

/** The webhook body's facts (SPEC "Delivery Receipt"), plus whose endpoint gets it. */
export interface DeliveryReceiptEvent {
  clientId: number;
  recipientId: number;
  to: string;
  from: string;
  status: string;
  clientReference: string | null;
}

/** Where delivery receipts go: the webhook outbox (src/webhooks) in the gateway, a recorder in tests. */
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

export class RecipientUpdates {
  constructor(
    private readonly store: DispatchStore,
    private readonly sink: DeliveryReceiptSink,
    private readonly logger: Logger,
  ) {}

  /**
   * Queues webhooks the caller built from recipient context it read in this transaction (the
   * receipt batch: see ReceiptApplier); the caller wakes the sender after commit.
   */
  enqueueKnown(events: readonly DeliveryReceiptEvent[], nowMs: number): void {
    if (events.length === 0) return;
    if (this.sink.enqueueMany !== undefined) {
      this.sink.enqueueMany(this.store.db, events, nowMs);
      return;
    }
    for (const event of events) this.sink.enqueue(this.store.db, event, nowMs);
  }

  /** Returns true when a webhook was enqueued (the caller wakes the sender after commit). */
  afterPartChange(recipientId: number, trigger: StatusTrigger, nowMs: number): boolean {
    const recipient = this.store.recipientContext(recipientId);
    if (recipient === undefined) {
      this.logger.warn({ recipientId }, 'part changed for a recipient that no longer exists');
      return false;
    }
    const parts = this.store.partsOfRecipient(recipientId).map((p) => ({
      partNumber: p.part_number,
      state: p.state,
      lastStatus: p.last_status,
      finalAt: p.final_at,
    }));
    const next = nextRecipientStatus({ status: recipient.status, lastStatus: recipient.last_status }, parts, trigger);
    if (next === undefined) return false;
    this.store.updateRecipient(recipientId, next.status, next.lastStatus, nowMs);
    // A client without a webhook URL gets no outbox row: there is nowhere to send it, and the
    // summary already counts the status. Setting a URL later does not replay old statuses.
    if (recipient.webhook_url === null || recipient.webhook_url === '' || next.lastStatus === null) return false;
    return this.sink.enqueue(
      this.store.db,
      {
        clientId: recipient.client_id,
        recipientId,
        to: recipient.msisdn,
        from: recipient.sender,
        status: next.lastStatus,
        clientReference: recipient.client_reference,
      },
      nowMs,
    );
  }
}
