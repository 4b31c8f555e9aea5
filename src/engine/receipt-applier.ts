/**
 * Receipts to recipients. A transport's receipt is stored (table receipts) and applied to the
 * part with the same (transport, message_id) in one transaction; the transport acknowledges it to
 * the SMSC only after that commit (the promise from onReceipt). A receipt that matches no part
 * yet (it beat its submit_sm_resp, or the response is still being written) is kept 'pending' and
 * matched when the part's message id is written (see OutcomeWriter); past
 * engine.unmatchedReceiptTtlMs it is marked 'expired' and logged.
 */
import type { Logger } from '../log.js';
import { fitStatus, isDeliveredStatus } from '../receipts/index.js';
import type { DispatchStore, ExpiredReceipt } from '../store/dispatch-store.js';
import type { TransportReceipt } from '../transports/transport.js';
import type { WriteBatcher } from './write-batcher.js';
import type { RecipientUpdates } from './recipient-updates.js';

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

  /**
   * Stores and applies one receipt; resolves once committed (then the transport may acknowledge
   * it). While the store refuses writes for a passing reason the batch is retried and this waits,
   * so the SMSC holds the receipt meanwhile. Counters and logs follow the commit (a write may run twice).
   */
  async accept(transport: string, receipt: TransportReceipt): Promise<void> {
    const applied = await this.batcher.run(() => this.applyOne(transport, receipt));
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

  /** Marks pending receipts older than the TTL expired and logs each; returns them. */
  expireUnmatched(ttlMs: number): ExpiredReceipt[] {
    const expired = this.store.expireReceipts(this.now() - ttlMs);
    for (const r of expired) {
      this.logger.warn(
        { receiptId: r.id, transport: r.transport, messageId: r.message_id, status: r.status, receivedAt: new Date(r.received_at).toISOString() },
        'receipt matched no submitted part within the TTL: expired (kept in table receipts)',
      );
    }
    return expired;
  }

  private applyOne(transport: string, received: TransportReceipt): { matched: boolean; logs: (() => void)[] } {
    const nowMs = this.now();
    const logs: (() => void)[] = [];
    const receipt = this.usableStatus(transport, received, logs);
    const part = this.store.partByMessageId(transport, receipt.messageId);
    this.store.insertReceipt({
      transport,
      messageId: receipt.messageId,
      status: receipt.status,
      final: receipt.final,
      errorCode: receipt.errorCode ?? null,
      doneAt: receipt.doneAt ?? null,
      raw: receipt.raw,
      receivedAt: nowMs,
      matchState: part === undefined ? 'pending' : 'matched',
      partId: part?.id ?? null,
    });
    if (part === undefined) return { matched: false, logs };
    this.applyToPart(part.id, part.recipient_id, { status: receipt.status, final: receipt.final, errorCode: receipt.errorCode ?? null }, nowMs);
    return { matched: true, logs };
  }

  /**
   * The webhook needs a status of 1 to 30 characters (SPEC "Limits"). Transports fit it already;
   * an empty one becomes UNKNOWN and a longer one keeps its first 30 characters, both logged.
   */
  private usableStatus(transport: string, receipt: TransportReceipt, logs: (() => void)[]): TransportReceipt {
    if (receipt.status.trim() === '') {
      logs.push(() => this.logger.warn({ transport, messageId: receipt.messageId }, 'receipt without a status: recorded as UNKNOWN'));
      return { ...receipt, status: 'UNKNOWN' };
    }
    const fitted = fitStatus(receipt.status);
    if (fitted.truncatedFromChars === undefined) return receipt;
    logs.push(() => this.logger.warn({ transport, messageId: receipt.messageId, status: receipt.status }, 'receipt status longer than 30 characters: first 30 kept'));
    return { ...receipt, status: fitted.status };
  }

}
