/**
 * The store side of the part-changing steps on SQLite (src/engine/steps: part changes, receipts,
 * outcomes, the unmatched-receipt sweep). Synchronous: every method runs inside the WriteBatcher's
 * group-commit transaction (or the scheduler's), so a read and the write of its plan see nothing
 * in between. A single gateway owns its file: no locks, and no claimant (claimed_by is null).
 */
import { SqliteClaimStore } from '../../store/sqlite/claim-queries.js';
import { SqliteCreditLedger } from '../../store/sqlite/credit-ledger.js';
import { SqliteMaterialiseStore } from '../../store/sqlite/materialise-queries.js';
import { SqliteRecoveryStore } from '../../store/sqlite/recovery-queries.js';
import { SqliteRerouteStore } from '../../store/sqlite/reroute-queries.js';
import type { EngineStepStores } from '../contracts.js';
import type { DispatchStore, ExpiredReceipt } from '../../store/sqlite/dispatch-store.js';
import { PartChangeQueries } from '../../store/sqlite/part-change-queries.js';
import type { SqlitePartWrites } from '../../store/sqlite/part-writes.js';
import { insertCustomerDeliveries } from '../../store/sqlite/smpp-delivery-store.js';
import type { PartRow } from '../../store/part-change-rows.js';
import { acceptedPairs, partsInScope, type OutcomeFacts, type OutcomesPlan, type OutcomeStepStore, type SubmitResult } from '../steps/outcomes.js';
import type { PartChangeFacts, PartChangesPlan, PartChangesStore } from '../steps/part-changes.js';
import type { ArrivingReceipt, ReceiptFacts, ReceiptsPlan, ReceiptStepStore } from '../steps/receipts.js';
import type { RematchFacts, RematchPlan, UnmatchedReceiptStore } from '../steps/unmatched-receipts.js';
import { enqueueDeliveryReceipts, type DeliveryReceiptSink } from './delivery-receipt-sink.js';

export class SqlitePartChangesStore implements PartChangesStore<'sync'> {
  private readonly credits: SqliteCreditLedger;
  /** The batch updates of parts and recipients (also the outcome step's acceptances): the dispatch store's. */
  readonly writes: SqlitePartWrites;

  constructor(
    private readonly dispatch: DispatchStore,
    private readonly queries: PartChangeQueries,
    private readonly sink: DeliveryReceiptSink,
  ) {
    this.credits = new SqliteCreditLedger(dispatch.db);
    this.writes = dispatch.partWrites;
  }

  readRecipientFacts(recipientIds: readonly number[]): PartChangeFacts {
    const ids = [...new Set(recipientIds)];
    return { parts: this.queries.partsOfRecipients(ids), recipients: this.queries.recipients(ids) };
  }

  /** `parts` with their recipients, and every part of those with more than one part. */
  factsOfParts(parts: readonly PartRow[]): PartChangeFacts {
    const multi = [...new Set(parts.filter((p) => p.parts_total > 1).map((p) => p.recipient_id))];
    return {
      parts: [...this.queries.partsOfRecipients(multi), ...parts],
      recipients: this.queries.recipients([...new Set(parts.map((p) => p.recipient_id))]),
    };
  }

  writePartChanges(plan: PartChangesPlan, nowMs: number): void {
    // One statement a batch for the finishes and the recipients' statuses (at most one write a part
    // and a recipient in a plan); a non-final receipt's note is rare and written alone.
    this.writes.finishParts(plan.partReceipts.flatMap((w) => (w.kind === 'finish' ? [w] : [])), nowMs);
    for (const w of plan.partReceipts) if (w.kind === 'note') this.dispatch.notePartStatus(w.partId, w.status, nowMs);
    this.writes.updateRecipients(plan.recipients, nowMs);
    enqueueDeliveryReceipts(this.sink, this.dispatch.db, plan.outbox, nowMs);
    // An SMPP customer's receipt commits with the status that caused it, or not at all.
    insertCustomerDeliveries(this.dispatch.db, plan.customerDeliveries ?? []);
    // In the caller's transaction: a charge commits with the acceptance that causes it.
    this.credits.apply(plan.credits, nowMs);
  }
}

export class SqliteReceiptStepStore implements ReceiptStepStore<'sync'> {
  constructor(
    private readonly dispatch: DispatchStore,
    private readonly queries: PartChangeQueries,
    private readonly changes: SqlitePartChangesStore,
  ) {}

  readReceiptFacts(items: readonly ArrivingReceipt[]): ReceiptFacts {
    const byTransport = new Map<string, string[]>();
    for (const { transport, receipt } of items) byTransport.set(transport, [...(byTransport.get(transport) ?? []), receipt.messageId]);
    const found = [...byTransport].map(([transport, ids]) => this.queries.targetParts(transport, [...new Set(ids)]));
    return { targets: found.flatMap((f) => f.targets), ...this.changes.factsOfParts(found.flatMap((f) => f.parts)) };
  }

  writeReceipts(plan: ReceiptsPlan, nowMs: number): void {
    this.dispatch.insertReceipts(plan.receipts.map((r) => ({
      transport: r.transport, messageId: r.messageId, status: r.status, final: r.final, errorCode: r.errorCode, doneAt: r.doneAt, raw: r.raw,
      receivedAt: r.receivedAt, matchState: r.match.kind === 'matched' ? 'matched' : 'pending', partId: r.match.kind === 'matched' ? r.match.partId : null,
    })));
    this.changes.writePartChanges(plan.changes, nowMs);
  }
}

export class SqliteOutcomeStepStore implements OutcomeStepStore<'sync'> {
  constructor(
    private readonly dispatch: DispatchStore,
    private readonly queries: PartChangeQueries,
    private readonly changes: SqlitePartChangesStore,
  ) {}

  readOutcomeFacts(results: readonly SubmitResult[]): OutcomeFacts {
    const claimed = this.queries.parts(results.flatMap((r) => r.parts.map((p) => p.id)));
    const byTransport = new Map<string, string[]>();
    for (const { transport, messageId } of acceptedPairs(results)) byTransport.set(transport, [...(byTransport.get(transport) ?? []), messageId]);
    const unmatched = [...byTransport].flatMap(([transport, ids]) => this.queries.unmatchedOf(transport, ids));
    const scope = new Set(partsInScope(results, unmatched).map((p) => p.id));
    const facts = this.changes.factsOfParts(claimed.filter((p) => scope.has(p.id)));
    return { unmatched, recipients: facts.recipients, parts: [...claimed, ...facts.parts] };
  }

  writeOutcomes(plan: OutcomesPlan, nowMs: number): void {
    // The read and this write share one synchronous transaction: the guards (state 'submitting') hold.
    // The acceptances, nearly every transition, in one statement a batch; a retry or a failure alone.
    this.changes.writes.markSubmitted(plan.transitions.flatMap((t) => (t.kind === 'submitted' ? [t] : [])), nowMs);
    for (const t of plan.transitions) {
      if (t.kind === 'requeue') this.dispatch.requeue(t.partId, t.attempts, t.dueAtMs, t.status, t.errorCode, nowMs);
      else if (t.kind === 'fail') this.dispatch.failPart(t.partId, t.attempts, t.status, t.errorCode, nowMs);
    }
    for (const m of plan.matches) this.dispatch.matchReceipt(m.receiptId, m.partId);
    this.changes.writePartChanges(plan.changes, nowMs);
  }
}

export class SqliteUnmatchedReceiptStore implements UnmatchedReceiptStore<'sync'> {
  constructor(
    private readonly dispatch: DispatchStore,
    private readonly queries: PartChangeQueries,
    private readonly changes: SqlitePartChangesStore,
  ) {}

  readMatchable(limit: number): RematchFacts {
    const receipts = this.queries.matchable(limit);
    return { receipts, ...this.changes.factsOfParts(this.queries.parts([...new Set(receipts.map((r) => r.part_id))])) };
  }

  writeMatches(plan: RematchPlan, nowMs: number): void {
    for (const m of plan.matches) this.dispatch.matchReceipt(m.receiptId, m.partId);
    this.changes.writePartChanges(plan.changes, nowMs);
  }

  expireUnmatched(receivedBeforeMs: number): ExpiredReceipt[] {
    return this.dispatch.expireReceipts(receivedBeforeMs);
  }
}

/** Every step's store on the gateway's one connection: the engine's store contract on SQLite. */
export function sqliteStepStores(dispatch: DispatchStore, sink: DeliveryReceiptSink): EngineStepStores<'sync'> {
  const queries = new PartChangeQueries(dispatch.db);
  const partChanges = new SqlitePartChangesStore(dispatch, queries, sink);
  return {
    materialise: new SqliteMaterialiseStore(dispatch.db, (rows, nowMs) => enqueueDeliveryReceipts(sink, dispatch.db, rows, nowMs)),
    claim: new SqliteClaimStore(dispatch.db),
    recovery: new SqliteRecoveryStore(dispatch.db),
    partChanges,
    outcomes: new SqliteOutcomeStepStore(dispatch, queries, partChanges),
    receipts: new SqliteReceiptStepStore(dispatch, queries, partChanges),
    unmatchedReceipts: new SqliteUnmatchedReceiptStore(dispatch, queries, partChanges),
    reroute: new SqliteRerouteStore(dispatch.db),
  };
}
