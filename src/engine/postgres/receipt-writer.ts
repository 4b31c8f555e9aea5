/**
 * Receipts on PostgreSQL: the receipts queued for one transaction (PgUnitRunner, group-committed
 * with others) are stored and applied in it, read -> plan (steps/receipts.ts) -> write; the
 * promise resolves after COMMIT, so the transport acknowledges the SMSC only then. The sweep
 * matches receipts stored unmatched whose part has its message id by now, and expires those past
 * engine.unmatchedReceiptTtlMs.
 */
import type { Logger } from '../../common/log.js';
import { inTransaction, type PgClient, type PgPool } from '../../store/postgres/pool.js';
import type { TransportReceipt } from '../../transports/transport.js';
import { logExpiredReceipts } from '../expired-receipts-log.js';
import { emitLogLines, type LogLine } from '../steps/log-lines.js';
import type { PartChangeOptions } from '../steps/part-changes.js';
import { planReceipts, type ArrivingReceipt } from '../steps/receipts.js';
import { planRematch } from '../steps/unmatched-receipts.js';
import { pgStepStores } from './step-stores.js';
import type { PgUnitRunner, PgWriteGroup } from './unit-runner.js';

interface AppliedReceipt {
  matched: boolean;
  webhook: boolean;
  customerDeliveries: boolean;
  logs: LogLine[];
}

/** Unmatched receipts matched per sweep transaction. */
const SWEEP_BATCH = 500;

export class PgReceiptWriter {
  matched = 0;
  unmatched = 0;

  constructor(
    private readonly pool: PgPool,
    private readonly units: PgUnitRunner,
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly wakeWebhooks: () => void,
    /** The engine's settings the part changes use (receiptRetentionHours). */
    private readonly options: PartChangeOptions = {},
    /** Called after a commit that stored deliver_sm rows for SMPP customers (the delivery sender sends them at once). */
    private readonly wakeCustomerDeliveries: () => void = () => undefined,
  ) {}

  /** The receipts queued for one transaction are applied by one call: see applyBatch. */
  private readonly group: PgWriteGroup<ArrivingReceipt, AppliedReceipt> = { apply: (client, items) => this.applyBatch(client, items) };

  async accept(transport: string, receipt: TransportReceipt): Promise<void> {
    const applied = await this.units.writeInGroup(this.group, { transport, receipt });
    if (applied.matched) this.matched++;
    else this.unmatched++;
    emitLogLines(this.logger, applied.logs);
    if (applied.webhook) this.wakeWebhooks();
    if (applied.customerDeliveries) this.wakeCustomerDeliveries();
  }

  private async applyBatch(client: PgClient, items: readonly ArrivingReceipt[]): Promise<AppliedReceipt[]> {
    const nowMs = this.now();
    const store = pgStepStores(client).receipts;
    const plan = planReceipts(items, await store.readReceiptFacts(items), nowMs, this.options);
    await store.writeReceipts(plan, nowMs);
    const webhook = plan.changes.outbox.length > 0;
    const customerDeliveries = plan.changes.customerDeliveries !== undefined;
    // The batch's own lines (a recipient gone) go with its first receipt.
    return plan.results.map((r, k) => ({ matched: r.matched, webhook, customerDeliveries, logs: k === 0 ? [...plan.changes.logs, ...r.logs] : r.logs }));
  }

  /**
   * Unmatched receipts whose part has its message id by now are matched and applied (one
   * transaction per SWEEP_BATCH), then those older than the TTL are expired and logged. Returns
   * how many expired.
   */
  async sweep(expireReceivedBeforeMs: number): Promise<number> {
    for (;;) {
      const plan = await inTransaction(this.pool, async (client) => {
        const nowMs = this.now();
        const store = pgStepStores(client).unmatchedReceipts;
        const planned = planRematch(await store.readMatchable(SWEEP_BATCH), nowMs, this.options);
        await store.writeMatches(planned, nowMs);
        return planned;
      });
      emitLogLines(this.logger, plan.changes.logs);
      if (plan.changes.outbox.length > 0) this.wakeWebhooks();
      if (plan.changes.customerDeliveries !== undefined) this.wakeCustomerDeliveries();
      if (plan.matches.length < SWEEP_BATCH) break;
    }
    const expired = await inTransaction(this.pool, (client) => pgStepStores(client).unmatchedReceipts.expireUnmatched(expireReceivedBeforeMs));
    logExpiredReceipts(this.logger, expired);
    return expired.length;
  }
}
