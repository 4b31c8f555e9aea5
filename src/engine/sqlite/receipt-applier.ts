/**
 * Receipts to recipients. A transport's receipt is stored (table receipts) and applied to the
 * part with the same (transport, message_id) in one transaction; the transport acknowledges it to
 * the SMSC only after that commit (the promise from onReceipt). A receipt that matches no part
 * yet (it beat its submit_sm_resp, or the response is still being written) is kept 'pending' and
 * matched when the part's message id is written (see OutcomeWriter); past
 * engine.unmatchedReceiptTtlMs it is marked 'expired' and logged.
 */
import type { Logger } from '../../common/log.js';
import { logExpiredReceipts } from '../expired-receipts-log.js';
import { fitStatus, isDeliveredStatus } from '../../receipts/index.js';
import type { DispatchStore, ExpiredReceipt, ReceiptInsert, ReceiptTarget } from '../../store/sqlite/dispatch-store.js';
import type { TransportReceipt } from '../../transports/transport.js';
import type { WriteBatcher, WriteGroup } from './write-batcher.js';
import { targetChangeFor, type DeliveryReceiptEvent, type RecipientUpdates } from './recipient-updates.js';

interface QueuedReceipt {
  transport: string;
  receipt: TransportReceipt;
}

interface AppliedReceipt {
  matched: boolean;
  logs: (() => void)[];
}

export interface ReceiptStatus {
  status: string;
  final: boolean;
  errorCode: string | null;
}

export class ReceiptApplier {
  /** Receipts applied since start, for stats. */
  matched = 0;
  parked = 0;

  constructor(
    private readonly batcher: WriteBatcher,
    private readonly store: DispatchStore,
    private readonly recipients: RecipientUpdates,
    /** Set when a write enqueued a webhook; the engine wakes the sender after the commit. */
    private readonly noteWebhook: () => void,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /** The receipts queued for one commit are applied by one call: see applyBatch. */
  private readonly group: WriteGroup<QueuedReceipt, AppliedReceipt> = { apply: (items) => this.applyBatch(items) };

  /**
   * Stores and applies one receipt; resolves once committed (then the transport may acknowledge
   * it). While the store refuses writes for a passing reason the batch is retried and this waits,
   * so the SMSC holds the receipt meanwhile. Counters and logs follow the commit (a write may run twice).
   */
  async accept(transport: string, receipt: TransportReceipt): Promise<void> {
    const applied = await this.batcher.runInGroup(this.group, { transport, receipt });
    if (applied.matched) this.matched++;
    else this.parked++;
    for (const log of applied.logs) log();
  }

  /**
   * Applies a receipt's status to a part inside the caller's transaction. A final status moves the
   * part to delivered (status begins with DELIV) or undelivered, unless it is final already: a
   * final part state is never overwritten, so duplicates and late receipts change nothing.
   * Returns true when a webhook was enqueued.
   */
  applyToPart(partId: number, recipientId: number, receipt: ReceiptStatus, nowMs: number): boolean {
    const changed = receipt.final
      ? this.store.finishPart(partId, isDeliveredStatus(receipt.status) ? 'delivered' : 'undelivered', receipt.status, receipt.errorCode, nowMs)
      : this.store.notePartStatus(partId, receipt.status, nowMs);
    if (!changed) return false;
    const enqueued = this.recipients.afterPartChange(recipientId, { status: receipt.status, final: receipt.final }, nowMs);
    if (enqueued) this.noteWebhook();
    return enqueued;
  }

  /** Marks pending receipts older than the TTL expired and logs them (one line per sweep); returns them. */
  expireUnmatched(ttlMs: number): ExpiredReceipt[] {
    const expired = this.store.expireReceipts(this.now() - ttlMs);
    logExpiredReceipts(this.logger, expired);
    return expired;
  }

  /**
   * Applies the receipts of one commit with a few statements for the whole batch:
   * one query finds every receipt's part with its recipient context (no per-receipt lookups), the
   * receipts go in with multi-row INSERTs, and so do the webhooks. A single-part recipient's status
   * is computed from the part it just read and changed, without reading it back; a recipient with
   * more parts takes the per-part path (applyToPart), which reads its other parts.
   */
  private applyBatch(items: readonly QueuedReceipt[]): AppliedReceipt[] {
    const nowMs = this.now();
    const usable = items.map((item) => {
      const logs: (() => void)[] = [];
      return { transport: item.transport, receipt: usableReceipt(item.transport, item.receipt, this.logger, logs), logs };
    });
    const targets = new Map<string, Map<string, ReceiptTarget>>();
    for (const transport of new Set(usable.map((u) => u.transport))) {
      const ids = usable.filter((u) => u.transport === transport).map((u) => u.receipt.messageId);
      targets.set(transport, new Map(this.store.receiptTargets(transport, ids).map((t) => [t.message_id, t])));
    }
    const inserts: ReceiptInsert[] = [];
    const webhooks: DeliveryReceiptEvent[] = [];
    const results = usable.map(({ transport, receipt, logs }): AppliedReceipt => {
      const target = targets.get(transport)?.get(receipt.messageId);
      inserts.push({
        transport,
        messageId: receipt.messageId,
        status: receipt.status,
        final: receipt.final,
        errorCode: receipt.errorCode ?? null,
        doneAt: receipt.doneAt ?? null,
        raw: receipt.raw,
        receivedAt: nowMs,
        matchState: target === undefined ? 'pending' : 'matched',
        partId: target?.id ?? null,
      });
      if (target === undefined) return { matched: false, logs };
      this.applyToTarget(target, { status: receipt.status, final: receipt.final, errorCode: receipt.errorCode ?? null }, nowMs, webhooks);
      return { matched: true, logs };
    });
    this.store.insertReceipts(inserts);
    if (webhooks.length > 0) {
      this.recipients.enqueueKnown(webhooks, nowMs);
      this.noteWebhook();
    }
    return results;
  }

  /**
   * applyToPart for a part read with its recipient (receiptTargets). The target is updated in
   * place, so a second receipt for the same message in the batch sees the first one's effect.
   */
  private applyToTarget(target: ReceiptTarget, receipt: ReceiptStatus, nowMs: number, webhooks: DeliveryReceiptEvent[]): void {
    if (target.parts_total !== 1 || target.recipient_status === null) {
      this.applyToPart(target.id, target.recipient_id, receipt, nowMs);
      return;
    }
    // A final part state is never overwritten (the statements' WHERE says the same).
    if (target.state === 'delivered' || target.state === 'undelivered') return;
    if (receipt.final) {
      const state = isDeliveredStatus(receipt.status) ? 'delivered' : 'undelivered';
      if (!this.store.finishPart(target.id, state, receipt.status, receipt.errorCode, nowMs)) return;
      target.state = state;
      target.final_at = nowMs;
    } else if (!this.store.notePartStatus(target.id, receipt.status, nowMs)) {
      return;
    }
    target.part_last_status = receipt.status;
    const change = targetChangeFor(target, target.recipient_status, { status: receipt.status, final: receipt.final });
    if (change === undefined) return;
    this.store.updateRecipient(target.recipient_id, change.status, change.lastStatus, nowMs);
    // In place: a second receipt for the same message in the batch sees this one's effect.
    target.recipient_status = change.status;
    target.recipient_last_status = change.lastStatus;
    if (change.receipt !== undefined) webhooks.push(change.receipt);
  }
}

/**
 * The webhook needs a status of 1 to 30 characters (SPEC "Limits"). Transports fit it already;
 * an empty one becomes UNKNOWN and a longer one keeps its first 30 characters, both logged (the
 * log lines are pushed to `logs`, written once the receipt committed).
 */
export function usableReceipt(transport: string, receipt: TransportReceipt, logger: Logger, logs: (() => void)[]): TransportReceipt {
  if (receipt.status.trim() === '') {
    logs.push(() => logger.warn({ transport, messageId: receipt.messageId }, 'receipt without a status: recorded as UNKNOWN'));
    return { ...receipt, status: 'UNKNOWN' };
  }
  const fitted = fitStatus(receipt.status);
  if (fitted.truncatedFromChars === undefined) return receipt;
  logs.push(() => logger.warn({ transport, messageId: receipt.messageId, status: receipt.status }, 'receipt status longer than 30 characters: first 30 kept'));
  return { ...receipt, status: fitted.status };
}
