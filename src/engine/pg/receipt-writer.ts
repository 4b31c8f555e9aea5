/**
 * Receipts on PostgreSQL (issue 11 item 2): one receipt is stored and applied to its part, its
 * recipient and the recipient's webhook row in one transaction (storeReceipt's lock on the
 * (transport, message id) pair orders it against the submitter's write on any node); the promise
 * resolves after COMMIT, so the transport acknowledges the SMSC only then. A receipt whose part has
 * no message id yet is parked; the submitter takes it (PgOutcomeWriter) or the sweep matches it
 * later (rematchParkedReceipts), and past engine.unmatchedReceiptTtlMs it expires.
 */
import type { Logger } from '../../log.js';
import { PgDispatchStore } from '../../store/pg/dispatch-store.js';
import { inTransaction, type PgPool } from '../../store/pg/pool.js';
import type { TransportReceipt } from '../../transports/transport.js';
import { usableReceipt } from '../receipt-applier.js';
import { PgPartChanges } from './part-changes.js';
import type { PgUnitRunner } from './unit-runner.js';

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

  async accept(transport: string, arriving: TransportReceipt): Promise<void> {
    const logs: (() => void)[] = [];
    const receipt = usableReceipt(transport, arriving, this.logger, logs);
    const applied = await this.units.write(async (client) => {
      const nowMs = this.now();
      const store = new PgDispatchStore(client);
      const stored = await store.storeReceipt({
        transport, messageId: receipt.messageId, status: receipt.status, final: receipt.final, errorCode: receipt.errorCode ?? null,
        doneAt: receipt.doneAt ?? null, raw: receipt.raw, receivedAt: nowMs,
      });
      if (stored.part === undefined) return { matched: false, webhook: false };
      const status = { status: receipt.status, final: receipt.final, errorCode: receipt.errorCode ?? null };
      const webhook = await new PgPartChanges(store, client, this.logger).applyReceipt(stored.part.id, stored.part.recipient_id, status, nowMs);
      return { matched: true, webhook };
    });
    if (applied.matched) this.matched++;
    else this.parked++;
    for (const log of logs) log();
    if (applied.webhook) this.wakeWebhooks();
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
    for (const r of expired) {
      this.logger.warn(
        { receiptId: r.id, transport: r.transport, messageId: r.message_id, status: r.status, receivedAt: new Date(r.received_at).toISOString() },
        'receipt matched no submitted part within the TTL: expired (kept in table receipts)',
      );
    }
    return expired.length;
  }
}
