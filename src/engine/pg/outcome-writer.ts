/**
 * Submit outcomes on PostgreSQL (issue 11 item 2): one message's outcomes in one transaction,
 * decided as on SQLite (outcome-decision.ts). Every write that ends the claim is fenced on the node
 * id asked at the write (markSubmittedTakingReceipts, requeue, failPart): a node whose claims were
 * reaped while it stalled finds its part requeued (perhaps sent by another node) and its write
 * refused, which changes nothing and is counted (fencedWrites). Receipts that beat the response
 * (parked, possibly by another node's bind) are taken and applied, and the recipient's status with
 * its webhook row written, in the same transaction as the part's change.
 */
import type { NodeIdSource } from '../../cluster/node-id.js';
import type { Logger } from '../../log.js';
import { PgDispatchStore } from '../../store/pg/dispatch-store.js';
import type { EngineConfig } from '../config.js';
import { decidePartAction, missingOutcome } from '../outcome-decision.js';
import type { OutcomeCounts, SubmitResult } from '../outcome-writer.js';
import { PgPartChanges } from './part-changes.js';
import type { PgUnitRunner } from './unit-runner.js';

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
    private readonly node: NodeIdSource,
    private readonly config: EngineConfig,
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly wakeWebhooks: () => void,
  ) {}

  async write(result: SubmitResult): Promise<void> {
    const tally = await this.units.write((client) => {
      const store = new PgDispatchStore(client);
      return this.apply(store, new PgPartChanges(store, client, this.logger), result);
    }, { first: true });
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

  private async apply(store: PgDispatchStore, changes: PgPartChanges, result: SubmitResult): Promise<Tally> {
    const nowMs = this.now();
    // Asked at the write: the id changes when a fenced node rejoins (src/cluster/node-id.ts).
    const nodeId = this.node.nodeId();
    const tally: Tally = { counts: { accepted: 0, retried: 0, held: 0, failed: 0 }, fenced: 0, webhooks: false, logs: [] };
    for (const part of result.parts) {
      const outcome = result.outcomes.find((o) => o.part === part.part_number) ?? missingOutcome(part);
      const { action, overlongStatus } = decidePartAction(part, outcome, { config: this.config, stopping: this.stopping, nowMs });
      if (overlongStatus !== undefined) {
        tally.logs.push(() => this.logger.warn({ partId: part.id, ...overlongStatus }, 'transport status longer than 30 characters: first 30 kept'));
      }
      switch (action.kind) {
        case 'submitted': {
          const early = await store.markSubmittedTakingReceipts(part.id, result.transport, action.messageId, nowMs, nodeId);
          if (early === undefined) {
            tally.fenced++;
            break;
          }
          tally.counts.accepted++;
          for (const receipt of early) {
            const status = { status: receipt.status, final: receipt.final === 1, errorCode: receipt.error_code };
            if (await changes.applyReceipt(part.id, part.recipient_id, status, nowMs)) tally.webhooks = true;
          }
          break;
        }
        case 'requeue': {
          if (await store.requeue(part.id, action.attempts, action.dueAtMs, action.status, action.errorCode, nowMs, nodeId)) tally.counts[action.counted]++;
          else tally.fenced++;
          break;
        }
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
    return tally;
  }
}
