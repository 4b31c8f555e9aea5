/**
 * Writes what a transport said about each submitted part, in group-committed transactions:
 * accepted -> 'submitted' with its message id (then any receipt that arrived early is matched);
 * temporary -> back to 'queued' for a later attempt (nextRetryAt), or 'undelivered' with the last
 * status once engine.maxAttempts attempts failed; permanent -> 'undelivered'. not-sent (the
 * transport was down or stopping), and any temporary failure while the engine is stopping, holds
 * the part without spending an attempt. What each answer means is decided in outcome-decision.ts,
 * shared with the PostgreSQL writer (the contract is on PartOutcome in src/transports/transport.ts).
 */
import type { Logger } from '../../common/log.js';
import type { ClaimablePart, DispatchStore } from '../../store/sqlite/dispatch-store.js';
import type { PartOutcome } from '../../transports/transport.js';
import type { EngineConfig } from '../config.js';
import { decidePartAction, missingOutcome } from '../outcome-decision.js';
import type { WriteBatcher, WriteGroup } from './write-batcher.js';
import type { ReceiptApplier } from './receipt-applier.js';
import type { RecipientUpdates } from './recipient-updates.js';

export interface SubmitResult {
  transport: string;
  parts: readonly ClaimablePart[];
  outcomes: readonly PartOutcome[];
  /**
   * The node id the parts were claimed under (LaneClaimer.claim's `claimant`; null for a single
   * gateway). The PostgreSQL writer fences on it, not on the id asked at the write: a node that
   * rejoined may hold the same part twice, a stale copy claimed under its former id and the one it
   * claimed again under the new id, and the stale copy's write must not end the new claim.
   */
  claimedBy: string | null;
}

export interface OutcomeCounts {
  accepted: number;
  retried: number;
  held: number;
  failed: number;
}

/**
 * What one write did besides SQL: counted and logged only once its transaction committed, since
 * a batch the store refused runs again (WriteBatcher).
 */
interface Tally {
  counts: OutcomeCounts;
  logs: (() => void)[];
}

export class OutcomeWriter {
  readonly counts: OutcomeCounts = { accepted: 0, retried: 0, held: 0, failed: 0 };
  /** Set while the engine stops: temporary failures then hold their part instead of spending an attempt. */
  stopping = false;

  constructor(
    private readonly batcher: WriteBatcher,
    private readonly store: DispatchStore,
    private readonly receipts: ReceiptApplier,
    private readonly recipients: RecipientUpdates,
    /** Set when a write enqueued a webhook; the engine wakes the sender after the commit. */
    private readonly noteWebhook: () => void,
    private readonly config: EngineConfig,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /** True while the store refuses writes (they are being retried): claim nothing new meanwhile. */
  get stalled(): boolean {
    return this.batcher.stalled;
  }

  /** The submit results queued for one commit are applied by one call: see applyBatch. */
  private readonly group: WriteGroup<SubmitResult, Tally> = { apply: (results) => this.applyBatch(results) };

  /** Resolves once the outcomes are on disk (retried while the store refuses them for a passing reason). */
  async write(result: SubmitResult): Promise<void> {
    const tally = await this.batcher.runInGroup(this.group, result, { first: true });
    this.counts.accepted += tally.counts.accepted;
    this.counts.retried += tally.counts.retried;
    this.counts.held += tally.counts.held;
    this.counts.failed += tally.counts.failed;
    for (const log of tally.logs) log();
  }

  /**
   * Applies the outcomes of one commit. Receipts that beat their submit_sm_resp are looked for with
   * one statement for every message id accepted in the batch, not one per part.
   */
  private applyBatch(results: readonly SubmitResult[]): Tally[] {
    const nowMs = this.now();
    const accepted = new Map<string, Map<string, ClaimablePart>>();
    const tallies = results.map((result) => {
      const tally: Tally = { counts: { accepted: 0, retried: 0, held: 0, failed: 0 }, logs: [] };
      let byMessageId = accepted.get(result.transport);
      if (byMessageId === undefined) {
        byMessageId = new Map();
        accepted.set(result.transport, byMessageId);
      }
      for (const part of result.parts) {
        const outcome = result.outcomes.find((o) => o.part === part.part_number) ?? missingOutcome(part);
        this.applyOutcome(part, outcome, nowMs, tally, byMessageId);
      }
      return tally;
    });
    for (const [transport, byMessageId] of accepted) this.matchEarlyReceipts(transport, byMessageId, nowMs);
    return tallies;
  }

  /** A receipt may have beaten the submit outcome (or the submit_sm_resp itself): match it now. */
  private matchEarlyReceipts(transport: string, byMessageId: ReadonlyMap<string, ClaimablePart>, nowMs: number): void {
    if (byMessageId.size === 0) return;
    for (const early of this.store.pendingReceiptsOf(transport, [...byMessageId.keys()])) {
      const part = byMessageId.get(early.message_id);
      if (part === undefined) continue;
      this.store.matchReceipt(early.id, part.id);
      const status = { status: early.status, final: early.final === 1, errorCode: early.error_code };
      this.receipts.applyToPart(part.id, part.recipient_id, status, nowMs);
    }
  }

  private applyOutcome(part: ClaimablePart, outcome: PartOutcome, nowMs: number, tally: Tally, accepted: Map<string, ClaimablePart>): void {
    const { action, overlongStatus } = decidePartAction(part, outcome, { config: this.config, stopping: this.stopping, nowMs });
    if (overlongStatus !== undefined) {
      tally.logs.push(() => this.logger.warn({ partId: part.id, ...overlongStatus }, 'transport status longer than 30 characters: first 30 kept'));
    }
    switch (action.kind) {
      case 'submitted': {
        if (!this.store.markSubmitted(part.id, action.messageId, nowMs)) return;
        tally.counts.accepted++;
        // Message ids are unique per SMSC; were one reused within a batch, its last part here gets the early receipt.
        accepted.set(action.messageId, part);
        return;
      }
      case 'requeue': {
        tally.counts[action.counted]++;
        this.store.requeue(part.id, action.attempts, action.dueAtMs, action.status, action.errorCode, nowMs);
        return;
      }
      case 'fail': {
        const { attempts, status } = action;
        if (action.exhausted) {
          tally.logs.push(() => this.logger.info({ partId: part.id, recipientId: part.recipient_id, attempts, status }, 'temporary failures exhausted the attempts: part undelivered'));
        }
        if (!this.store.failPart(part.id, attempts, status, action.errorCode, nowMs)) return;
        tally.counts.failed++;
        if (this.recipients.afterPartChange(part.recipient_id, { status, final: true }, nowMs)) this.noteWebhook();
        return;
      }
    }
  }
}
