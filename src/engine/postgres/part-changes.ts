/**
 * A recipient's status after parts the materialiser wrote itself (its NO_ROUTE parts, inserted
 * final): read -> plan (steps/part-changes.ts) -> write, inside the materialiser's transaction.
 */
import type { Logger } from '../../common/log.js';
import type { PgClient } from '../../store/postgres/pool.js';
import type { PgDispatchStore } from '../../store/postgres/dispatch-store.js';
import { emitLogLines } from '../steps/log-lines.js';
import { planRecipientChanges } from '../steps/part-changes.js';
import type { StatusTrigger } from '../recipient-status.js';
import { PgPartChangesStore } from './step-stores.js';

export class PgPartChanges {
  private readonly store: PgPartChangesStore;

  constructor(_dispatch: PgDispatchStore, client: PgClient, private readonly logger: Logger) {
    this.store = new PgPartChangesStore(client);
  }

  /** Returns true when a webhook was enqueued (the caller wakes the sender after commit). */
  async afterPartChange(recipientId: number, trigger: StatusTrigger, nowMs: number): Promise<boolean> {
    const plan = planRecipientChanges(await this.store.readRecipientFacts([recipientId]), [{ recipientId, trigger }], nowMs);
    await this.store.writePartChanges(plan, nowMs);
    emitLogLines(this.logger, plan.logs);
    return plan.outbox.length > 0;
  }
}
