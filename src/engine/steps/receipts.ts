/**
 * Receipts to parts: each receipt of a batch is stored (table receipts) and, when its
 * (transport, message id) names a part, applied to that part and its recipient (part-changes.ts),
 * in the order they arrived. A receipt naming no part yet is stored unmatched: it beat its
 * submit_sm_resp, or the response is still being written; the outcome step or the sweep matches
 * it later (unmatched-receipts.ts), and past engine.unmatchedReceiptTtlMs it expires.
 */
import { fitStatus } from '../../receipts/index.js';
import type { MessageIdTarget } from '../../store/part-change-rows.js';
import type { TransportReceipt } from '../../transports/transport.js';
import type { StoreMode, StoreResult } from '../store-mode.js';
import type { LogLine } from './log-lines.js';
import { PartChangeLedger, type PartChangeFacts, type PartChangeOptions, type PartChangesPlan } from './part-changes.js';

export interface ArrivingReceipt {
  transport: string;
  receipt: TransportReceipt;
}

/**
 * What the receipt step read: the part each (transport, message id) names now (ids naming none
 * are left out), and those parts with their recipients (PartChangeFacts).
 */
export interface ReceiptFacts extends PartChangeFacts {
  targets: readonly MessageIdTarget[];
}

/** A receipt row to insert: matched to its part, or unmatched (stored match_state 'pending'). */
export interface PlannedReceipt {
  transport: string;
  messageId: string;
  status: string;
  final: boolean;
  errorCode: string | null;
  doneAt: string | null;
  raw: string;
  receivedAt: number;
  match: { kind: 'matched'; partId: number } | { kind: 'unmatched' };
}

export interface ReceiptsPlan {
  /** In arrival order. */
  receipts: PlannedReceipt[];
  changes: PartChangesPlan;
  /** One per receipt, in order: whether it matched a part, and the lines to log once committed. */
  results: { matched: boolean; logs: LogLine[] }[];
}

export function planReceipts(items: readonly ArrivingReceipt[], facts: ReceiptFacts, nowMs: number, options: PartChangeOptions = {}): ReceiptsPlan {
  const targets = new Map(facts.targets.map((t) => [targetKey(t.transport, t.message_id), t.part_id]));
  const ledger = new PartChangeLedger(facts, nowMs, options);
  const receipts: PlannedReceipt[] = [];
  const results = items.map((item) => {
    const { receipt, logs } = usableReceipt(item.transport, item.receipt);
    const partId = targets.get(targetKey(item.transport, receipt.messageId));
    receipts.push({
      transport: item.transport,
      messageId: receipt.messageId,
      status: receipt.status,
      final: receipt.final,
      errorCode: receipt.errorCode ?? null,
      doneAt: receipt.doneAt ?? null,
      raw: receipt.raw,
      receivedAt: nowMs,
      match: partId === undefined ? { kind: 'unmatched' } : { kind: 'matched', partId },
    });
    if (partId === undefined) return { matched: false, logs };
    ledger.applyReceipt(partId, { status: receipt.status, final: receipt.final, errorCode: receipt.errorCode ?? null });
    return { matched: true, logs };
  });
  return { receipts, changes: ledger.plan(), results };
}

export function targetKey(transport: string, messageId: string): string {
  return `${transport}\u0000${messageId}`;
}

/**
 * The webhook needs a status of 1 to 30 characters (SPEC "Limits"). Transports fit it already;
 * an empty one becomes UNKNOWN and a longer one keeps its first 30 characters, both logged.
 */
export function usableReceipt(transport: string, receipt: TransportReceipt): { receipt: TransportReceipt; logs: LogLine[] } {
  if (receipt.status.trim() === '') {
    return {
      receipt: { ...receipt, status: 'UNKNOWN' },
      logs: [{ level: 'warn', fields: { transport, messageId: receipt.messageId }, message: 'receipt without a status: recorded as UNKNOWN' }],
    };
  }
  const fitted = fitStatus(receipt.status);
  if (fitted.truncatedFromChars === undefined) return { receipt, logs: [] };
  return {
    receipt: { ...receipt, status: fitted.status },
    logs: [{ level: 'warn', fields: { transport, messageId: receipt.messageId, status: receipt.status }, message: 'receipt status longer than 30 characters: first 30 kept' }],
  };
}

/** The store side of the receipt step; both methods run inside the caller's transaction. */
export interface ReceiptStepStore<M extends StoreMode> {
  /**
   * The parts the receipts' (transport, message id) pairs name (the newest part with that id) and
   * their recipients with all their parts. PostgreSQL first takes each pair's advisory transaction
   * lock (the submitter writing that message id on any node takes it too: one waits for the other,
   * so a receipt is either found by the submitter or finds the part, never neither), then locks
   * the rows of multi-part recipients FOR UPDATE before reading their parts.
   */
  readReceiptFacts(items: readonly ArrivingReceipt[]): StoreResult<M, ReceiptFacts>;
  /** Inserts the receipts (in order) and writes the part changes; one statement per kind on PostgreSQL. */
  writeReceipts(plan: ReceiptsPlan, nowMs: number): StoreResult<M, void>;
}
