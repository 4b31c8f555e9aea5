/**
 * Receipts on SQLite: the receipts queued for one group commit (WriteBatcher) are stored and
 * applied in that transaction, read -> plan (steps/receipts.ts) -> write; the transport
 * acknowledges each to the SMSC only after that commit (the promise from accept). Counters and
 * logs follow the commit (a refused batch runs again).
 */
import type { Logger } from '../../common/log.js';
import type { TransportReceipt } from '../../transports/transport.js';
import { emitLogLines, type LogLine } from '../steps/log-lines.js';
import type { PartChangeOptions } from '../steps/part-changes.js';
import { planReceipts, type ArrivingReceipt, type ReceiptStepStore } from '../steps/receipts.js';
import type { WriteBatcher, WriteGroup } from './write-batcher.js';

interface AppliedReceipt {
  matched: boolean;
  logs: LogLine[];
}

export class ReceiptApplier {
  /** Receipts applied since start, for stats: matched to their part, or stored unmatched. */
  matched = 0;
  unmatched = 0;

  constructor(
    private readonly batcher: WriteBatcher,
    private readonly store: ReceiptStepStore<'sync'>,
    /** Set when a write enqueued a webhook; the engine wakes the sender after the commit. */
    private readonly noteWebhook: () => void,
    private readonly logger: Logger,
    private readonly now: () => number,
    /** The engine's settings the part changes use (receiptRetentionHours). */
    private readonly options: PartChangeOptions = {},
    /** Set when a write stored deliver_sm rows for SMPP customers; the engine wakes their sender after the commit. */
    private readonly noteCustomerDeliveries: () => void = () => undefined,
  ) {}

  /** The receipts queued for one commit are applied by one call: see applyBatch. */
  private readonly group: WriteGroup<ArrivingReceipt, AppliedReceipt> = { apply: (items) => this.applyBatch(items) };

  /**
   * Stores and applies one receipt; resolves once committed (then the transport may acknowledge
   * it). While the store refuses writes for a passing reason the batch is retried and this waits,
   * so the SMSC holds the receipt meanwhile.
   */
  async accept(transport: string, receipt: TransportReceipt): Promise<void> {
    const applied = await this.batcher.runInGroup(this.group, { transport, receipt });
    if (applied.matched) this.matched++;
    else this.unmatched++;
    emitLogLines(this.logger, applied.logs);
  }

  private applyBatch(items: readonly ArrivingReceipt[]): AppliedReceipt[] {
    const nowMs = this.now();
    const plan = planReceipts(items, this.store.readReceiptFacts(items), nowMs, this.options);
    this.store.writeReceipts(plan, nowMs);
    if (plan.changes.outbox.length > 0) this.noteWebhook();
    if (plan.changes.customerDeliveries !== undefined) this.noteCustomerDeliveries();
    // The batch's own lines (a recipient gone) go with its first receipt.
    return plan.results.map((r, k) => ({ matched: r.matched, logs: k === 0 ? [...plan.changes.logs, ...r.logs] : r.logs }));
  }
}
