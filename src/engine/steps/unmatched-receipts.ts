/**
 * The unmatched-receipt sweep: receipts stored unmatched (their part had no message id yet) whose
 * (transport, message id) names a part by now are matched and applied as if they had just arrived,
 * oldest first; those still unmatched past engine.unmatchedReceiptTtlMs are expired and logged
 * (expired-receipts-log.ts), kept in table receipts.
 */
import type { ExpiredReceipt } from '../../store/sqlite/dispatch-store.js';
import type { UnmatchedReceiptRow } from '../../store/part-change-rows.js';
import type { StoreMode, StoreResult } from '../store-mode.js';
import { PartChangeLedger, type PartChangeFacts, type PartChangeOptions, type PartChangesPlan } from './part-changes.js';

/** An unmatched receipt and the part its message id names now. */
export interface MatchableReceipt extends UnmatchedReceiptRow {
  part_id: number;
}

export interface RematchFacts extends PartChangeFacts {
  /** Oldest first. */
  receipts: readonly MatchableReceipt[];
}

/** An unmatched receipt to mark matched to a part. */
export interface ReceiptMatch {
  receiptId: number;
  partId: number;
}

export interface RematchPlan {
  matches: ReceiptMatch[];
  changes: PartChangesPlan;
}

export function planRematch(facts: RematchFacts, nowMs: number, options: PartChangeOptions = {}): RematchPlan {
  const ledger = new PartChangeLedger(facts, nowMs, options);
  const matches: ReceiptMatch[] = [];
  for (const r of [...facts.receipts].sort((a, b) => a.id - b.id)) {
    matches.push({ receiptId: r.id, partId: r.part_id });
    ledger.applyReceipt(r.part_id, { status: r.status, final: r.final === 1, errorCode: r.error_code });
  }
  return { matches, changes: ledger.plan() };
}

/** Receipts received before this instant and still unmatched are expired. */
export function expiryCutoffMs(nowMs: number, ttlMs: number): number {
  return nowMs - ttlMs;
}

/** The store side of the sweep. */
export interface UnmatchedReceiptStore<M extends StoreMode> {
  /**
   * Up to `limit` unmatched receipts (oldest first) whose message id names a part now, with those
   * parts and their recipients. Inside the caller's transaction. PostgreSQL takes the pairs'
   * advisory locks first (as receipts and the submitter do), then the receipt rows FOR UPDATE,
   * and skips any another transaction matched meanwhile, so no receipt is matched twice.
   */
  readMatchable(limit: number): StoreResult<M, RematchFacts>;
  /** Marks the receipts matched (only those still unmatched) and writes the part changes. Same transaction as the read. */
  writeMatches(plan: RematchPlan, nowMs: number): StoreResult<M, void>;
  /** Marks unmatched receipts received before the cutoff expired, in one statement; returns them, oldest first. */
  expireUnmatched(receivedBeforeMs: number): StoreResult<M, ExpiredReceipt[]>;
}
