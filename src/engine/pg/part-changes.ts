/**
 * A part's change carried to its recipient inside the caller's PostgreSQL transaction (what
 * RecipientUpdates and ReceiptApplier.applyToPart do on SQLite): the recipient row is locked, its
 * status recomputed from all its parts (nextRecipientStatus) and, when it changed, written with its
 * Delivery Receipt outbox row (insertOutboxRow, body from serializeDeliveryReceipt) in the same
 * transaction, so a status change and its webhook are stored together or not at all.
 */
import type { Logger } from '../../log.js';
import { isDeliveredStatus } from '../../receipts/index.js';
import type { PgDispatchStore } from '../../store/pg/dispatch-store.js';
import type { PgClient } from '../../store/pg/pool.js';
import { insertOutboxRow } from '../../store/pg/webhook-store.js';
import { serializeDeliveryReceipt } from '../../webhooks/delivery-receipt.js';
import type { ReceiptStatus } from '../receipt-applier.js';
import { nextRecipientStatus, type StatusTrigger } from '../recipient-status.js';

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

  /** Returns true when a webhook was enqueued (the caller wakes the sender after commit). */
  async afterPartChange(recipientId: number, trigger: StatusTrigger, nowMs: number): Promise<boolean> {
    const recipient = await this.store.lockRecipientContext(recipientId);
    if (recipient === undefined) {
      this.logger.warn({ recipientId }, 'part changed for a recipient that no longer exists');
      return false;
    }
    const parts = (await this.store.partsOfRecipient(recipientId)).map((p) => ({
      partNumber: p.part_number,
      state: p.state,
      lastStatus: p.last_status,
      finalAt: p.final_at,
    }));
    const next = nextRecipientStatus({ status: recipient.status, lastStatus: recipient.last_status }, parts, trigger);
    if (next === undefined) return false;
    await this.store.updateRecipient(recipientId, next.status, next.lastStatus, nowMs);
    // As on SQLite: a client without a webhook URL gets no outbox row.
    if (recipient.webhook_url === null || recipient.webhook_url === '' || next.lastStatus === null) return false;
    const body = serializeDeliveryReceipt({ to: recipient.msisdn, from: recipient.sender, status: next.lastStatus, clientReference: recipient.client_reference });
    return insertOutboxRow(this.client, { clientId: recipient.client_id, recipientId, body, nowMs });
  }
}
