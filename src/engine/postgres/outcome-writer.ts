/**
 * Submit outcomes on PostgreSQL: one message's outcomes in one transaction,
 * decided as on SQLite (outcome-decision.ts). Every write that ends the claim is fenced on the node
 * id the parts were claimed under (SubmitResult.claimedBy; markSubmittedTakingReceipts, requeue,
 * failPart): a node whose claims were reaped while it stalled finds its part requeued (perhaps
 * sent by another node, or claimed again by itself under its new id) and its write refused, which
 * changes nothing and is counted (fencedWrites). Receipts that beat the response
 * (parked, possibly by another node's bind) are taken and applied, and the recipient's status with
 * its webhook row written, in the same transaction as the part's change.
 */
import type { Logger } from '../../common/log.js';
import type { ClaimablePart } from '../../store/sqlite/dispatch-store.js';
import { PgDispatchStore } from '../../store/postgres/dispatch-store.js';
import type { PgClient } from '../../store/postgres/pool.js';
import type { EngineConfig } from '../config.js';
import { decidePartAction, missingOutcome } from '../outcome-decision.js';
import type { OutcomeCounts, SubmitResult } from '../sqlite/outcome-writer.js';
import { PgPartChanges } from './part-changes.js';
import type { PgUnitRunner, PgWriteGroup } from './unit-runner.js';

interface Tally {
  counts: OutcomeCounts;
  fenced: number;
  webhooks: boolean;
  logs: (() => void)[];
}

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
  ) {}

  /** The submit results queued for one transaction are applied by one call: see applyBatch. */
  private readonly group: PgWriteGroup<SubmitResult, Tally> = { apply: (client, results) => this.applyBatch(client, results) };

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
    for (const log of tally.logs) log();
    if (tally.webhooks) this.wakeWebhooks();
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

  /**
   * The outcomes of one transaction: requeues and failures part by part (with the recipient's
   * status and webhook row for a failure), the accepted parts of the whole batch with one statement
   * (markManySubmittedTakingReceipts), then the receipts that beat their response applied.
   */
  private async applyBatch(client: PgClient, results: readonly SubmitResult[]): Promise<Tally[]> {
    const nowMs = this.now();
    const store = new PgDispatchStore(client);
    const changes = new PgPartChanges(store, client, this.logger);
    const accepted: { tally: Tally; part: ClaimablePart; transport: string; messageId: string; nodeId: string | null }[] = [];
    const tallies: Tally[] = [];
    for (const result of results) {
      // The claim's stamp, not the id now (it changes when a fenced node rejoins, src/common/node-id.ts).
      const nodeId = result.claimedBy;
      const tally: Tally = { counts: { accepted: 0, retried: 0, held: 0, failed: 0 }, fenced: 0, webhooks: false, logs: [] };
      tallies.push(tally);
      for (const part of result.parts) {
        const outcome = result.outcomes.find((o) => o.part === part.part_number) ?? missingOutcome(part);
        const { action, overlongStatus } = decidePartAction(part, outcome, { config: this.config, stopping: this.stopping, nowMs });
        if (overlongStatus !== undefined) {
          tally.logs.push(() => this.logger.warn({ partId: part.id, ...overlongStatus }, 'transport status longer than 30 characters: first 30 kept'));
        }
        switch (action.kind) {
          case 'submitted':
            accepted.push({ tally, part, transport: result.transport, messageId: action.messageId, nodeId });
            break;
          case 'requeue':
            if (await store.requeue(part.id, action.attempts, action.dueAtMs, action.status, action.errorCode, nowMs, nodeId)) tally.counts[action.counted]++;
            else tally.fenced++;
            break;
          case 'fail': {
            const { attempts, status } = action;
            if (!(await store.failPart(part.id, attempts, status, action.errorCode, nowMs, nodeId))) {
              tally.fenced++;
              break;
            }
            if (action.exhausted) {
              tally.logs.push(() => this.logger.info({ partId: part.id, recipientId: part.recipient_id, attempts, status }, 'temporary failures exhausted the attempts: part undelivered'));
            }
            tally.counts.failed++;
            if (await changes.afterPartChange(part.recipient_id, { status, final: true }, nowMs)) tally.webhooks = true;
            break;
          }
        }
      }
    }
    if (accepted.length === 0) return tallies;
    // One statement per claim stamp (one, unless the batch spans a rejoin).
    const submitted = new Set<number>();
    const receipts: Awaited<ReturnType<PgDispatchStore['markManySubmittedTakingReceipts']>>['receipts'] = [];
    for (const nodeId of new Set(accepted.map((a) => a.nodeId))) {
      const marked = await store.markManySubmittedTakingReceipts(
        accepted.filter((a) => a.nodeId === nodeId).map((a) => ({ id: a.part.id, transport: a.transport, messageId: a.messageId })), nowMs, nodeId);
      for (const id of marked.submitted) submitted.add(id);
      receipts.push(...marked.receipts);
    }
    receipts.sort((a, b) => a.id - b.id);
    const byPartId = new Map<number, (typeof accepted)[number]>();
    for (const a of accepted) {
      if (submitted.has(a.part.id)) {
        a.tally.counts.accepted++;
        byPartId.set(a.part.id, a);
      } else {
        a.tally.fenced++;
      }
    }
    for (const receipt of receipts) {
      const a = byPartId.get(receipt.part_id);
      if (a === undefined) continue;
      const status = { status: receipt.status, final: receipt.final === 1, errorCode: receipt.error_code };
      if (await changes.applyReceipt(a.part.id, a.part.recipient_id, status, nowMs)) a.tally.webhooks = true;
    }
    return tallies;
  }
}
