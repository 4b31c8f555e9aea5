/**
 * Submit outcomes on PostgreSQL: the results queued for one transaction (PgUnitRunner, ahead of
 * the receipts of the batch) are applied in it, read -> plan (steps/outcomes.ts) -> write. The
 * read takes the claim fence: a part no longer 'submitting' under the stamp it was claimed with
 * (reaped while this node stalled, perhaps sent by another node) changes nothing and is counted
 * (fencedWrites) and logged once per batch.
 */
import type { Logger } from '../../common/log.js';
import type { PgClient } from '../../store/postgres/pool.js';
import type { EngineConfig } from '../config.js';
import { emitLogLines } from '../steps/log-lines.js';
import { planOutcomes, type OutcomeCounts, type OutcomeTally, type SubmitResult } from '../steps/outcomes.js';
import { pgStepStores } from './step-stores.js';
import type { PgUnitRunner, PgWriteGroup } from './unit-runner.js';

export class PgOutcomeWriter {
  readonly counts: OutcomeCounts = { accepted: 0, retried: 0, held: 0, failed: 0 };
  fencedWrites = 0;
  stopping = false;
  private readonly fencedSinceLog = new Map<string, number>();
  private fencedLogPending = false;

  constructor(
    private readonly units: PgUnitRunner,
    private readonly config: EngineConfig,
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly wakeWebhooks: () => void,
    /** Called after a commit that stored deliver_sm rows for SMPP customers (the delivery sender sends them at once). */
    private readonly wakeCustomerDeliveries: () => void = () => undefined,
  ) {}

  /** The submit results queued for one transaction are applied by one call: see applyBatch. */
  private readonly group: PgWriteGroup<SubmitResult, OutcomeTally & { customerDeliveries: boolean }> = { apply: (client, results) => this.applyBatch(client, results) };

  /** Resolves once the outcomes are committed (retried while the database refuses them for a passing reason). */
  async write(result: SubmitResult): Promise<void> {
    const tally = await this.units.writeInGroup(this.group, result, { first: true });
    this.counts.accepted += tally.counts.accepted;
    this.counts.retried += tally.counts.retried;
    this.counts.held += tally.counts.held;
    this.counts.failed += tally.counts.failed;
    if (tally.fenced > 0) {
      this.fencedWrites += tally.fenced;
      this.noteFenced(result.transport, tally.fenced);
    }
    emitLogLines(this.logger, tally.logs);
    if (tally.webhooks) this.wakeWebhooks();
    if (tally.customerDeliveries) this.wakeCustomerDeliveries();
  }

  /**
   * One info line per committed batch, not per message: the units of a batch settle together, so
   * refusals noted in the same turn of the event loop are logged as one.
   */
  private noteFenced(transport: string, refused: number): void {
    this.fencedSinceLog.set(transport, (this.fencedSinceLog.get(transport) ?? 0) + refused);
    if (this.fencedLogPending) return;
    this.fencedLogPending = true;
    setImmediate(() => {
      this.fencedLogPending = false;
      for (const [name, count] of this.fencedSinceLog) {
        this.logger.info({ transport: name, refused: count }, 'outcomes refused: the parts are no longer this node\'s claim (reaped while it stalled); nothing was changed');
      }
      this.fencedSinceLog.clear();
    });
  }

  private async applyBatch(client: PgClient, results: readonly SubmitResult[]): Promise<(OutcomeTally & { customerDeliveries: boolean })[]> {
    const nowMs = this.now();
    const store = pgStepStores(client).outcomes;
    const plan = planOutcomes(results, await store.readOutcomeFacts(results), { config: this.config, stopping: this.stopping, nowMs });
    await store.writeOutcomes(plan, nowMs);
    // The batch's own lines (a recipient gone) go with its first result.
    const customerDeliveries = plan.changes.customerDeliveries !== undefined;
    return plan.tallies.map((t, k) => ({ ...t, customerDeliveries, ...(k === 0 ? { logs: [...t.logs, ...plan.changes.logs] } : {}) }));
  }
}
