/**
 * Receipts on PostgreSQL: a receipt is stored and applied to its part, its
 * recipient and the recipient's webhook row in one transaction (group-committed with others; the
 * lock on the (transport, message id) pair orders it against the submitter's write on any node);
 * the promise resolves after COMMIT, so the transport acknowledges the SMSC only then. A receipt whose part has
 * no message id yet is parked; the submitter takes it (PgOutcomeWriter) or the sweep matches it
 * later (rematchParkedReceipts), and past engine.unmatchedReceiptTtlMs it expires.
 */
import type { Logger } from '../../common/log.js';
import type { ReceiptTarget } from '../../store/sqlite/dispatch-store.js';
import { PgDispatchStore } from '../../store/postgres/dispatch-store.js';
import { inTransaction, type PgClient, type PgPool } from '../../store/postgres/pool.js';
import type { TransportReceipt } from '../../transports/transport.js';
import { logExpiredReceipts } from '../expired-receipts-log.js';
import { usableReceipt } from '../sqlite/receipt-applier.js';
import { PgPartChanges } from './part-changes.js';
import type { PgUnitRunner, PgWriteGroup } from './unit-runner.js';

interface QueuedReceipt {
  transport: string;
  receipt: TransportReceipt;
}

interface AppliedReceipt {
  matched: boolean;
  webhook: boolean;
}

/** Parked receipts matched per sweep transaction. */
const SWEEP_BATCH = 500;

export class PgReceiptWriter {
  matched = 0;
  parked = 0;

  constructor(
    private readonly pool: PgPool,
    private readonly units: PgUnitRunner,
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly wakeWebhooks: () => void,
  ) {}

  /** The receipts queued for one transaction are applied by one call: see applyBatch. */
  private readonly group: PgWriteGroup<QueuedReceipt, AppliedReceipt> = { apply: (client, items) => this.applyBatch(client, items) };

  async accept(transport: string, arriving: TransportReceipt): Promise<void> {
    const logs: (() => void)[] = [];
    const receipt = usableReceipt(transport, arriving, this.logger, logs);
    const applied = await this.units.writeInGroup(this.group, { transport, receipt });
    if (applied.matched) this.matched++;
    else this.parked++;
    for (const log of logs) log();
    if (applied.webhook) this.wakeWebhooks();
  }

  /**
   * The receipts of one transaction with a few statements for the whole batch (as on SQLite):
   * their (transport, message id) locks in one statement (storeReceipt's lock: a
   * submitter writing one of these ids on any node is waited for, or waits), one query for every
   * receipt's part with its recipient context, one multi-row INSERT of the receipts; then each
   * matched receipt is applied to its part, recipient and webhook row.
   */
  private async applyBatch(client: PgClient, items: readonly QueuedReceipt[]): Promise<AppliedReceipt[]> {
    const nowMs = this.now();
    const store = new PgDispatchStore(client);
    const changes = new PgPartChanges(store, client, this.logger);
    await store.lockMessageIds(items.map((i) => ({ transport: i.transport, messageId: i.receipt.messageId })));
    const targets = new Map<string, Map<string, ReceiptTarget>>();
    for (const transport of new Set(items.map((i) => i.transport))) {
      const ids = items.filter((i) => i.transport === transport).map((i) => i.receipt.messageId);
      targets.set(transport, new Map((await store.receiptTargets(transport, ids)).map((t) => [t.message_id, t])));
    }
    const targetOf = (item: QueuedReceipt): ReceiptTarget | undefined => targets.get(item.transport)?.get(item.receipt.messageId);
    await store.insertReceipts(items.map(({ transport, receipt }, k) => {
      const target = targetOf(items[k] as QueuedReceipt);
      return {
        transport, messageId: receipt.messageId, status: receipt.status, final: receipt.final, errorCode: receipt.errorCode ?? null,
        doneAt: receipt.doneAt ?? null, raw: receipt.raw, receivedAt: nowMs, matchState: target === undefined ? 'pending' : 'matched', partId: target?.id ?? null,
      };
    }));
    const results: AppliedReceipt[] = [];
    for (const item of items) {
      const target = targetOf(item);
      if (target === undefined) {
        results.push({ matched: false, webhook: false });
        continue;
      }
      const status = { status: item.receipt.status, final: item.receipt.final, errorCode: item.receipt.errorCode ?? null };
      results.push({ matched: true, webhook: await changes.applyReceiptToTarget(target, status, nowMs) });
    }
    return results;
  }

  /**
   * Parked receipts whose part has its message id by now are matched and applied (one transaction
   * per batch), then those older than the TTL are expired and logged. Returns the expired.
   */
  async sweep(ttlMs: number): Promise<number> {
    for (;;) {
      const { rematched, webhooks } = await inTransaction(this.pool, async (client) => {
        const nowMs = this.now();
        const store = new PgDispatchStore(client);
        const changes = new PgPartChanges(store, client, this.logger);
        const found = await store.rematchParkedReceipts(SWEEP_BATCH);
        let enqueued = false;
        for (const r of found) {
          if (await changes.applyReceipt(r.part_id, r.recipient_id, { status: r.status, final: r.final === 1, errorCode: r.error_code }, nowMs)) enqueued = true;
        }
        return { rematched: found.length, webhooks: enqueued };
      });
      if (webhooks) this.wakeWebhooks();
      if (rematched < SWEEP_BATCH) break;
    }
    const expired = await new PgDispatchStore(this.pool).expireReceipts(this.now() - ttlMs);
    logExpiredReceipts(this.logger, expired);
    return expired.length;
  }
}
