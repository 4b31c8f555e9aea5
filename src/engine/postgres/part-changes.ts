/**
 * A part's change carried to its recipient inside the caller's PostgreSQL transaction (what
 * RecipientUpdates and ReceiptApplier.applyToPart do on SQLite): the recipient row is locked, its
 * status recomputed from all its parts (nextRecipientStatus) and, when it changed, written with its
 * Delivery Receipt outbox row (insertOutboxRow, body from serializeDeliveryReceipt) in the same
 * transaction, so a status change and its webhook are stored together or not at all.
 */
import type { Logger } from '../../common/log.js';
import { isDeliveredStatus } from '../../receipts/index.js';
import type { ReceiptTarget } from '../../store/sqlite/dispatch-store.js';
import type { PgDispatchStore } from '../../store/postgres/dispatch-store.js';
import type { PgClient } from '../../store/postgres/pool.js';
import { insertOutboxRow } from '../../store/postgres/webhook-store.js';
import { serializeDeliveryReceipt } from '../../webhooks/delivery-receipt.js';
import type { ReceiptStatus } from '../sqlite/receipt-applier.js';
import type { StatusTrigger } from '../recipient-status.js';
import { recipientChangeFor, targetChangeFor } from '../sqlite/recipient-updates.js';

export class PgPartChanges {
  constructor(
    private readonly store: PgDispatchStore,
    private readonly client: PgClient,
    private readonly logger: Logger,
  ) {}

  /**
   * A receipt's status on its part: a final one moves it to delivered (status begins with DELIV)
   * or undelivered unless it is final already (never overwritten). Returns true when a webhook was enqueued.
   */
  async applyReceipt(partId: number, recipientId: number, receipt: ReceiptStatus, nowMs: number): Promise<boolean> {
    const changed = receipt.final
      ? await this.store.finishPart(partId, isDeliveredStatus(receipt.status) ? 'delivered' : 'undelivered', receipt.status, receipt.errorCode, nowMs)
      : await this.store.notePartStatus(partId, receipt.status, nowMs);
    if (!changed) return false;
    return this.afterPartChange(recipientId, { status: receipt.status, final: receipt.final }, nowMs);
  }

  /**
   * applyReceipt for a part read with its recipient context (receiptTargets), as ReceiptApplier
   * does on SQLite: a single-part recipient's status is computed from the part just changed,
   * without reading it back (its only part: receipts for it serialise on the message id's lock, so
   * no recipient lock is needed); a recipient with more parts takes applyReceipt's path. The target
   * is updated in place, so a second receipt for the same message in the batch sees the first.
   */
  async applyReceiptToTarget(target: ReceiptTarget, receipt: ReceiptStatus, nowMs: number): Promise<boolean> {
    if (target.parts_total !== 1 || target.recipient_status === null) return this.applyReceipt(target.id, target.recipient_id, receipt, nowMs);
    // A final part state is never overwritten (the statements' WHERE says the same).
    if (target.state === 'delivered' || target.state === 'undelivered') return false;
    if (receipt.final) {
      const state = isDeliveredStatus(receipt.status) ? 'delivered' : 'undelivered';
      if (!(await this.store.finishPart(target.id, state, receipt.status, receipt.errorCode, nowMs))) return false;
      target.state = state;
      target.final_at = nowMs;
    } else if (!(await this.store.notePartStatus(target.id, receipt.status, nowMs))) {
      return false;
    }
    target.part_last_status = receipt.status;
    const change = targetChangeFor(target, target.recipient_status, { status: receipt.status, final: receipt.final });
    if (change === undefined) return false;
    await this.store.updateRecipient(target.recipient_id, change.status, change.lastStatus, nowMs);
    target.recipient_status = change.status;
    target.recipient_last_status = change.lastStatus;
    if (change.receipt === undefined) return false;
    return insertOutboxRow(this.client, { clientId: change.receipt.clientId, recipientId: target.recipient_id, body: serializeDeliveryReceipt(change.receipt), nowMs });
  }

  /** Returns true when a webhook was enqueued (the caller wakes the sender after commit). */
  async afterPartChange(recipientId: number, trigger: StatusTrigger, nowMs: number): Promise<boolean> {
    const recipient = await this.store.lockRecipientContext(recipientId);
    if (recipient === undefined) {
      this.logger.warn({ recipientId }, 'part changed for a recipient that no longer exists');
      return false;
    }
    const change = recipientChangeFor(recipient, await this.store.partsOfRecipient(recipientId), trigger);
    if (change === undefined) return false;
    await this.store.updateRecipient(recipientId, change.status, change.lastStatus, nowMs);
    if (change.receipt === undefined) return false;
    return insertOutboxRow(this.client, { clientId: change.receipt.clientId, recipientId, body: serializeDeliveryReceipt(change.receipt), nowMs });
  }
}
