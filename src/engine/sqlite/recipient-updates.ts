/**
 * A recipient's status after parts the scheduler wrote itself (its NO_ROUTE parts, inserted
 * final): read -> plan (steps/part-changes.ts) -> write, inside the scheduler's transaction.
 */
import type { Logger } from '../../common/log.js';
import { emitLogLines } from '../steps/log-lines.js';
import { planRecipientChanges, type PartChangesStore } from '../steps/part-changes.js';
import type { StatusTrigger } from '../recipient-status.js';

/** Declared in delivery-receipt-sink.ts; re-exported for modules that still import it from here. */
export type { DeliveryReceiptSink } from './delivery-receipt-sink.js';

export class RecipientUpdates {
  constructor(
    private readonly store: PartChangesStore<'sync'>,
    private readonly logger: Logger,
  ) {}

  /** Returns true when a webhook was enqueued (the caller wakes the sender after commit). */
  afterPartChange(recipientId: number, trigger: StatusTrigger, nowMs: number): boolean {
    const plan = planRecipientChanges(this.store.readRecipientFacts([recipientId]), [{ recipientId, trigger }], nowMs);
    this.store.writePartChanges(plan, nowMs);
    emitLogLines(this.logger, plan.logs);
    return plan.outbox.length > 0;
  }
}
