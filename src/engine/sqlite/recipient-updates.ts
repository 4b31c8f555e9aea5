/**
 * Applies a part's change to its recipient inside the caller's transaction: recomputes the
 * recipient status from all its parts (see recipient-status.ts) and, when it changed, writes it
 * and enqueues one Delivery Receipt webhook in the same transaction, so a status change and its
 * webhook are stored together or not at all.
 */
import type { Logger } from '../../common/log.js';
import type { SqliteDatabase } from '../../store/sqlite/database.js';
import type { DispatchStore, PartStatusRow, ReceiptTarget, RecipientContext } from '../../store/sqlite/dispatch-store.js';
import type { RecipientStatus } from '../../store/entities.js';
import { nextRecipientStatus, type StatusTrigger } from '../recipient-status.js';

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

/** What a part's change does to its recipient: the status to write, and the webhook to queue if any. */
export interface RecipientChange {
  status: RecipientStatus;
  lastStatus: string | null;
  /**
   * Undefined when the client has no webhook URL: there is nowhere to send it, and the summary
   * already counts the status. Setting a URL later does not replay old statuses.
   */
  receipt: DeliveryReceiptEvent | undefined;
}

/**
 * The recipient's next status from all its parts (recipient-status.ts) and its Delivery Receipt,
 * for the SQLite and the PostgreSQL engine alike; undefined when the status does not change.
 */
export function recipientChangeFor(recipient: RecipientContext, parts: readonly PartStatusRow[], trigger: StatusTrigger): RecipientChange | undefined {
  const next = nextRecipientStatus(
    { status: recipient.status, lastStatus: recipient.last_status },
    parts.map((p) => ({ partNumber: p.part_number, state: p.state, lastStatus: p.last_status, finalAt: p.final_at })),
    trigger,
  );
  if (next === undefined) return undefined;
  const hasUrl = recipient.webhook_url !== null && recipient.webhook_url !== '' && next.lastStatus !== null;
  return {
    ...next,
    receipt: hasUrl
      ? { clientId: recipient.client_id, recipientId: recipient.id, to: recipient.msisdn, from: recipient.sender, status: next.lastStatus as string, clientReference: recipient.client_reference }
      : undefined,
  };
}

/**
 * recipientChangeFor for a one-part recipient read with its part in a receipt batch (receiptTargets),
 * after the part's new state was written to `target`: computed from the target without reading the
 * part back (`recipientStatus` is the target's, known to be there). Shared by the SQLite and
 * PostgreSQL receipt paths.
 */
export function targetChangeFor(target: ReceiptTarget, recipientStatus: RecipientStatus, trigger: StatusTrigger): RecipientChange | undefined {
  const next = nextRecipientStatus(
    { status: recipientStatus, lastStatus: target.recipient_last_status },
    [{ partNumber: target.part_number, state: target.state, lastStatus: target.part_last_status, finalAt: target.final_at }],
    trigger,
  );
  if (next === undefined) return undefined;
  // As recipientChangeFor: no webhook URL, no Delivery Receipt.
  const hasUrl = target.webhook_url !== null && target.webhook_url !== '' && next.lastStatus !== null;
  const known = target.client_id !== null && target.msisdn !== null && target.sender !== null;
  return {
    ...next,
    receipt: hasUrl && known
      ? { clientId: target.client_id as number, recipientId: target.recipient_id, to: target.msisdn as string, from: target.sender as string, status: next.lastStatus as string, clientReference: target.client_reference }
      : undefined,
  };
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
    const change = recipientChangeFor(recipient, this.store.partsOfRecipient(recipientId), trigger);
    if (change === undefined) return false;
    this.store.updateRecipient(recipientId, change.status, change.lastStatus, nowMs);
    return change.receipt !== undefined && this.sink.enqueue(this.store.db, change.receipt, nowMs);
  }
}
