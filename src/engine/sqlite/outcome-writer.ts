/**
 * Submit outcomes on SQLite: the results queued for one group commit (WriteBatcher, ahead of the
 * receipts of the batch) are applied in that transaction, read -> plan (steps/outcomes.ts) ->
 * write. Counters and logs follow the commit (a refused batch runs again).
 */
import type { Logger } from '../../common/log.js';
import type { EngineConfig } from '../config.js';
import { emitLogLines } from '../steps/log-lines.js';
import { planOutcomes, type OutcomeCounts, type OutcomeStepStore, type OutcomeTally, type SubmitResult } from '../steps/outcomes.js';
import type { WriteBatcher, WriteGroup } from './write-batcher.js';

/** Declared with the outcome step; re-exported for modules that still import them from here. */
export type { OutcomeCounts, SubmitResult } from '../steps/outcomes.js';

export class OutcomeWriter {
  readonly counts: OutcomeCounts = { accepted: 0, retried: 0, held: 0, failed: 0 };
  /** Outcomes that changed nothing: the part was no longer 'submitting' (none on a single gateway in practice). */
  fencedWrites = 0;
  /** Set while the engine stops: temporary failures then hold their part instead of spending an attempt. */
  stopping = false;

  constructor(
    private readonly batcher: WriteBatcher,
    private readonly store: OutcomeStepStore<'sync'>,
    /** Set when a write enqueued a webhook; the engine wakes the sender after the commit. */
    private readonly noteWebhook: () => void,
    private readonly config: EngineConfig,
    private readonly logger: Logger,
    private readonly now: () => number,
    /** Set when a write stored deliver_sm rows for SMPP customers; the engine wakes their sender after the commit. */
    private readonly noteCustomerDeliveries: () => void = () => undefined,
  ) {}

  /** The submit results queued for one commit are applied by one call: see applyBatch. */
  private readonly group: WriteGroup<SubmitResult, OutcomeTally> = { apply: (results) => this.applyBatch(results) };

  /** Resolves once the outcomes are on disk (retried while the store refuses them for a passing reason). */
  async write(result: SubmitResult): Promise<void> {
    const tally = await this.batcher.runInGroup(this.group, result, { first: true });
    this.counts.accepted += tally.counts.accepted;
    this.counts.retried += tally.counts.retried;
    this.counts.held += tally.counts.held;
    this.counts.failed += tally.counts.failed;
    this.fencedWrites += tally.fenced;
    emitLogLines(this.logger, tally.logs);
  }

  private applyBatch(results: readonly SubmitResult[]): OutcomeTally[] {
    const nowMs = this.now();
    const plan = planOutcomes(results, this.store.readOutcomeFacts(results), { config: this.config, stopping: this.stopping, nowMs });
    this.store.writeOutcomes(plan, nowMs);
    if (plan.changes.outbox.length > 0) this.noteWebhook();
    if (plan.changes.customerDeliveries !== undefined) this.noteCustomerDeliveries();
    // The batch's own lines (a recipient gone) go with its first result.
    return plan.tallies.map((t, k) => (k === 0 ? { ...t, logs: [...t.logs, ...plan.changes.logs] } : t));
  }
}
