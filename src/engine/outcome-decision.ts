/**
 * What a transport's answer for one part means for that part (README "Retries"), as a value both
 * backends' outcome writers carry out: accepted -> 'submitted' with its message id; temporary ->
 * back to 'queued' for a later attempt, or 'undelivered' once engine.maxAttempts attempts failed;
 * permanent -> 'undelivered'; not-sent (and any temporary failure while the engine stops) holds the
 * part for a poll interval without spending an attempt. The only place attempts are counted.
 */
import { fitStatus } from '../receipts/index.js';
import type { ClaimablePart } from '../store/sqlite/dispatch-store.js';
import type { PartOutcome } from '../transports/transport.js';
import type { EngineConfig } from './config.js';
import { attemptsExhausted, nextRetryAt } from './retry-policy.js';

export type PartAction =
  | { kind: 'submitted'; messageId: string }
  /** 'retried' spent an attempt; 'held' did not (attempts unchanged). */
  | { kind: 'requeue'; counted: 'retried' | 'held'; attempts: number; dueAtMs: number; status: string; errorCode: string | null }
  /** exhausted: temporary failures used up engine.maxAttempts (logged by the writer after commit). */
  | { kind: 'fail'; attempts: number; status: string; errorCode: string | null; exhausted: boolean };

export interface PartDecision {
  action: PartAction;
  /** The transport's status was longer than 30 characters (SPEC "Limits"): its length, for a warning. */
  overlongStatus?: { status: string; chars: number };
}

export interface DecisionContext {
  config: EngineConfig;
  /** The engine is stopping: a temporary failure holds its part instead of spending an attempt. */
  stopping: boolean;
  nowMs: number;
}

export function decidePartAction(part: ClaimablePart, outcome: PartOutcome, ctx: DecisionContext): PartDecision {
  switch (outcome.kind) {
    case 'accepted':
      return { action: { kind: 'submitted', messageId: outcome.messageId } };
    case 'not-sent':
      return { action: hold(part, outcome.reason, null, ctx) };
    case 'temporary': {
      const fitted = fit(outcome.status);
      const errorCode = outcome.errorCode === undefined ? null : String(outcome.errorCode);
      if (ctx.stopping) return { action: hold(part, fitted.status, errorCode, ctx), ...fitted.warning };
      const attempts = part.attempts + 1;
      if (!attemptsExhausted(attempts, ctx.config)) {
        const dueAtMs = nextRetryAt(attempts, ctx.nowMs, ctx.config, outcome.retryAfterMs ?? 0);
        return { action: { kind: 'requeue', counted: 'retried', attempts, dueAtMs, status: fitted.status, errorCode }, ...fitted.warning };
      }
      return { action: { kind: 'fail', attempts, status: fitted.status, errorCode, exhausted: true }, ...fitted.warning };
    }
    case 'permanent': {
      const fitted = fit(outcome.status);
      const errorCode = outcome.errorCode === undefined ? null : String(outcome.errorCode);
      return { action: { kind: 'fail', attempts: part.attempts + 1, status: fitted.status, errorCode, exhausted: false }, ...fitted.warning };
    }
  }
}

/** Transport contract: every requested part gets one outcome. A missing one is treated as a lost response. */
export function missingOutcome(part: ClaimablePart): PartOutcome {
  return { part: part.part_number, kind: 'temporary', status: 'NO_OUTCOME' };
}

/** Back to the queue after the poll interval, attempts unchanged: nothing was spent. */
function hold(part: ClaimablePart, status: string, errorCode: string | null, ctx: DecisionContext): PartAction {
  return { kind: 'requeue', counted: 'held', attempts: part.attempts, dueAtMs: ctx.nowMs + ctx.config.pollIntervalMs, status, errorCode };
}

function fit(status: string): { status: string; warning: Pick<PartDecision, 'overlongStatus'> } {
  const fitted = fitStatus(status);
  const chars = fitted.truncatedFromChars;
  return { status: fitted.status, warning: chars === undefined ? {} : { overlongStatus: { status, chars } } };
}
