/**
 * Submit outcomes to parts (README "Retries"): what each transport answer means is decided by
 * decidePartAction (outcome-decision.ts); this planner applies those decisions to a batch of
 * submit results. accepted -> 'submitted' with its message id, and any receipt that arrived
 * unmatched for that id (it beat the submit_sm_resp) is matched and applied; requeue -> 'queued'
 * for a later attempt; fail -> 'undelivered', with its recipient's status and webhook.
 *
 * Fencing: only a part still 'submitting' under the claim stamp the parts were claimed with
 * (SubmitResult.claimedBy) is this node's; any other (reaped while the node stalled, perhaps sent
 * by another node, or claimed again under the node's new id) is fenced: counted, nothing changed.
 */
import type { ClaimablePart } from '../../store/sqlite/dispatch-store.js';
import type { UnmatchedReceiptRow } from '../../store/part-change-rows.js';
import type { PartOutcome } from '../../transports/transport.js';
import type { StoreMode, StoreResult } from '../store-mode.js';
import { decidePartAction, missingOutcome, type DecisionContext } from '../outcome-decision.js';
import type { LogLine } from './log-lines.js';
import { PartChangeLedger, type PartChangeFacts, type PartChangesPlan } from './part-changes.js';
import { targetKey } from './receipts.js';
import type { ReceiptMatch } from './unmatched-receipts.js';

export interface SubmitResult {
  transport: string;
  parts: readonly ClaimablePart[];
  outcomes: readonly PartOutcome[];
  /**
   * The node id the parts were claimed under (LaneClaimer.claim's `claimant`; null for a single
   * gateway). Writes are fenced on it, not on the id asked at the write: a node that rejoined may
   * hold the same part twice, a stale copy claimed under its former id and the one it claimed
   * again under the new id, and the stale copy's write must not end the new claim.
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
 * What the outcome step read: the claimed parts as they are now (state and claim stamp), the
 * unmatched receipts of the accepted (transport, message id) pairs (oldest first), and the
 * recipients in scope (recipientsInScope) with all their parts.
 */
export interface OutcomeFacts extends PartChangeFacts {
  unmatched: readonly UnmatchedReceiptRow[];
}

/** A claim ending, written only while the part is still 'submitting' under `claimedBy`. */
export type PartTransition =
  | { kind: 'submitted'; partId: number; claimedBy: string | null; messageId: string }
  | { kind: 'requeue'; partId: number; claimedBy: string | null; attempts: number; dueAtMs: number; status: string; errorCode: string | null }
  | { kind: 'fail'; partId: number; claimedBy: string | null; attempts: number; status: string; errorCode: string | null };

/** One submit result's share of the plan, counted and logged once the batch committed. */
export interface OutcomeTally {
  counts: OutcomeCounts;
  /** Parts whose outcome changed nothing: no longer this node's claim. */
  fenced: number;
  /** A webhook row was queued in the batch (the sender is woken after the commit). */
  webhooks: boolean;
  logs: LogLine[];
}

export interface OutcomesPlan {
  /** Written before the matches and the part changes, which apply to parts these submitted. */
  transitions: PartTransition[];
  matches: ReceiptMatch[];
  changes: PartChangesPlan;
  /** One per submit result, in order. */
  tallies: OutcomeTally[];
}

export function planOutcomes(results: readonly SubmitResult[], facts: OutcomeFacts, ctx: DecisionContext): OutcomesPlan {
  const ledger = new PartChangeLedger(facts, ctx.nowMs, ctx.config);
  const transitions: PartTransition[] = [];
  /** Accepted parts by (transport, message id); were an id reused within a batch, its last part gets the receipts. */
  const accepted = new Map<string, number>();
  const tallies = results.map((result): OutcomeTally => {
    const tally: OutcomeTally = { counts: { accepted: 0, retried: 0, held: 0, failed: 0 }, fenced: 0, webhooks: false, logs: [] };
    const { claimedBy } = result;
    for (const part of result.parts) {
      const outcome = result.outcomes.find((o) => o.part === part.part_number) ?? missingOutcome(part);
      const { action, overlongStatus } = decidePartAction(part, outcome, ctx);
      if (overlongStatus !== undefined) {
        tally.logs.push({ level: 'warn', fields: { partId: part.id, ...overlongStatus }, message: 'transport status longer than 30 characters: first 30 kept' });
      }
      const now = ledger.part(part.id);
      if (now === undefined || now.state !== 'submitting' || now.claimed_by !== claimedBy) {
        tally.fenced++;
        continue;
      }
      switch (action.kind) {
        case 'submitted':
          transitions.push({ kind: 'submitted', partId: part.id, claimedBy, messageId: action.messageId });
          ledger.patchPart(part.id, { state: 'submitted', claimed_by: null });
          accepted.set(targetKey(result.transport, action.messageId), part.id);
          tally.counts.accepted++;
          break;
        case 'requeue':
          transitions.push({ kind: 'requeue', partId: part.id, claimedBy, attempts: action.attempts, dueAtMs: action.dueAtMs, status: action.status, errorCode: action.errorCode });
          ledger.patchPart(part.id, { state: 'queued', last_status: action.status, claimed_by: null });
          tally.counts[action.counted]++;
          break;
        case 'fail': {
          const { attempts, status } = action;
          transitions.push({ kind: 'fail', partId: part.id, claimedBy, attempts, status, errorCode: action.errorCode });
          ledger.patchPart(part.id, { state: 'undelivered', last_status: status, final_at: ctx.nowMs, claimed_by: null });
          tally.counts.failed++;
          if (action.exhausted) {
            tally.logs.push({ level: 'info', fields: { partId: part.id, recipientId: part.recipient_id, attempts, status }, message: 'temporary failures exhausted the attempts: part undelivered' });
          }
          ledger.afterPartChange(part.recipient_id, { status, final: true });
          break;
        }
      }
    }
    return tally;
  });
  const matches: ReceiptMatch[] = [];
  for (const receipt of [...facts.unmatched].sort((a, b) => a.id - b.id)) {
    const partId = accepted.get(targetKey(receipt.transport, receipt.message_id));
    if (partId === undefined) continue;
    matches.push({ receiptId: receipt.id, partId });
    ledger.applyReceipt(partId, { status: receipt.status, final: receipt.final === 1, errorCode: receipt.error_code });
  }
  const changes = ledger.plan();
  if (changes.outbox.length > 0) for (const tally of tallies) tally.webhooks = true;
  return { transitions, matches, changes, tallies };
}

/** The (transport, message id) pairs the results accepted: their unmatched receipts are read and their locks taken. */
export function acceptedPairs(results: readonly SubmitResult[]): { transport: string; messageId: string }[] {
  const pairs: { transport: string; messageId: string }[] = [];
  for (const result of results) {
    for (const outcome of result.outcomes) {
      if (outcome.kind === 'accepted' && result.parts.some((p) => p.part_number === outcome.part)) pairs.push({ transport: result.transport, messageId: outcome.messageId });
    }
  }
  return pairs;
}

/**
 * The claimed parts whose recipient the plan may change (its facts must be read): a part whose
 * outcome is not an acceptance (it may fail), or one accepted with an unmatched receipt waiting.
 * A batch of plain acceptances reads no recipient.
 */
export function partsInScope(results: readonly SubmitResult[], unmatched: readonly UnmatchedReceiptRow[]): ClaimablePart[] {
  const waiting = new Set(unmatched.map((r) => targetKey(r.transport, r.message_id)));
  const parts: ClaimablePart[] = [];
  for (const result of results) {
    for (const part of result.parts) {
      const outcome = result.outcomes.find((o) => o.part === part.part_number);
      if (outcome?.kind !== 'accepted' || waiting.has(targetKey(result.transport, outcome.messageId))) parts.push(part);
    }
  }
  return parts;
}

/** The store side of the outcome step; both methods run inside the caller's transaction. */
export interface OutcomeStepStore<M extends StoreMode> {
  /**
   * The claimed parts as they are now, the unmatched receipts of the accepted pairs
   * (acceptedPairs), and the recipients of partsInScope with all their parts. PostgreSQL takes the
   * accepted pairs' advisory locks and the claimed parts' rows FOR UPDATE first (so the fence read
   * holds until the write), then the unmatched receipts FOR UPDATE, then locks the multi-part
   * recipients FOR UPDATE before reading their parts.
   */
  readOutcomeFacts(results: readonly SubmitResult[]): StoreResult<M, OutcomeFacts>;
  /**
   * Writes the transitions (each still guarded on 'submitting' under its claim stamp), then marks
   * the matched receipts, then the part changes; one statement per kind on PostgreSQL.
   */
  writeOutcomes(plan: OutcomesPlan, nowMs: number): StoreResult<M, void>;
}
