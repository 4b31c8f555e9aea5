/**
 * The store side of the part-changing steps on PostgreSQL (src/engine/steps: part changes,
 * receipts, outcomes, the unmatched-receipt sweep). Each store works on one connection inside the
 * caller's transaction (PgUnitRunner's group, or the sweep's): its read takes the locks the step
 * needs, so the plan decided on what it read still holds when it is written; its write is one
 * statement per kind of change for the whole batch (part-change-queries.ts).
 *
 * Locks, always in this order: the (transport, message id) advisory locks (every writer of a
 * message id takes them: the submitter, receipts, the sweep), then part rows (the claim fence),
 * then receipt rows, then the rows of multi-part recipients in id order. A single-part recipient
 * has no lock of its own: its only part is ordered by its message id's lock, or by the claim.
 */
import { PgClaimStore } from '../../store/postgres/claim-queries.js';
import { applyCreditMovements } from '../../store/postgres/credit-ledger.js';
import { PgMaterialiseStore } from '../../store/postgres/materialise-queries.js';
import { PgRecoveryStore } from '../../store/postgres/recovery-queries.js';
import { PgRerouteStore } from '../../store/postgres/reroute-queries.js';
import type { EngineStepStores } from '../contracts.js';
import { insertOutboxRows } from '../../store/postgres/webhook-store.js';
import type { PartRow, RecipientRow } from '../../store/part-change-rows.js';
import type { PgClient } from '../../store/postgres/pool.js';
import * as q from '../../store/postgres/part-change-queries.js';
import { insertCustomerDeliveries } from '../../store/postgres/smpp-delivery-store.js';
import type { ExpiredReceipt } from '../../store/sqlite/dispatch-store.js';
import { serializeDeliveryReceipt } from '../../webhooks/delivery-receipt.js';
import { acceptedPairs, partsInScope, type OutcomeFacts, type OutcomesPlan, type OutcomeStepStore, type SubmitResult } from '../steps/outcomes.js';
import type { PartChangeFacts, PartChangesPlan, PartChangesStore } from '../steps/part-changes.js';
import type { ArrivingReceipt, ReceiptFacts, ReceiptsPlan, ReceiptStepStore } from '../steps/receipts.js';
import type { RematchFacts, RematchPlan, UnmatchedReceiptStore } from '../steps/unmatched-receipts.js';

export class PgPartChangesStore implements PartChangesStore<'async'> {
  constructor(private readonly client: PgClient) {}

  async readRecipientFacts(recipientIds: readonly number[]): Promise<PartChangeFacts> {
    const ids = [...new Set(recipientIds)];
    const recipients = await q.recipientsById(this.client, ids, true);
    return { recipients, parts: await q.partsOfRecipients(this.client, ids) };
  }

  /**
   * `parts` with their recipients: a single-part recipient's row as is, a multi-part one's locked
   * FOR UPDATE and then every one of its parts read (after the lock: the parts another
   * transaction changed under that lock are seen committed).
   */
  async factsOfParts(parts: readonly PartRow[], known: readonly RecipientRow[] = []): Promise<PartChangeFacts> {
    const read = new Set(known.map((r) => r.id));
    const single = [...new Set(parts.filter((p) => p.parts_total === 1 && !read.has(p.recipient_id)).map((p) => p.recipient_id))];
    const multi = [...new Set(parts.filter((p) => p.parts_total > 1).map((p) => p.recipient_id))];
    const recipients = [
      ...known.filter((r) => !multi.includes(r.id)), ...await q.recipientsById(this.client, single, false), ...await q.recipientsById(this.client, multi, true),
    ];
    // The parts read after their recipient's lock first: the ledger keeps the first row of a part.
    return { recipients, parts: [...await q.partsOfRecipients(this.client, multi), ...parts] };
  }

  async writePartChanges(plan: PartChangesPlan, nowMs: number): Promise<void> {
    await q.writePartStatuses(this.client, plan.partReceipts.map((w) => (w.kind === 'finish'
      ? { partId: w.partId, state: w.state, status: w.status, errorCode: w.errorCode }
      : { partId: w.partId, state: null, status: w.status, errorCode: null })), nowMs);
    await q.writeRecipientStatuses(this.client, plan.recipients, nowMs);
    await insertOutboxRows(this.client, plan.outbox.map((e) => ({ clientId: e.clientId, recipientId: e.recipientId, body: serializeDeliveryReceipt(e), nowMs })));
    // An SMPP customer's receipt commits with the status that caused it, or not at all.
    await insertCustomerDeliveries(this.client, plan.customerDeliveries ?? []);
    // In the unit's transaction: a charge commits with the (fenced) acceptance that causes it.
    await applyCreditMovements(this.client, plan.credits, nowMs);
  }
}

export class PgReceiptStepStore implements ReceiptStepStore<'async'> {
  private readonly changes: PgPartChangesStore;

  constructor(private readonly client: PgClient) {
    this.changes = new PgPartChangesStore(client);
  }

  async readReceiptFacts(items: readonly ArrivingReceipt[]): Promise<ReceiptFacts> {
    const pairs = items.map((i) => ({ transport: i.transport, messageId: i.receipt.messageId }));
    await q.lockPairs(this.client, pairs);
    const found = await q.targetsWithContext(this.client, pairs);
    const parts = found.map((t): PartRow => ({
      id: t.id, recipient_id: t.recipient_id, part_number: t.part_number, parts_total: t.parts_total, state: t.state, last_status: t.last_status, final_at: t.final_at,
      claimed_by: t.claimed_by, credits: t.credits, campaign_id: t.campaign_id, client_id: t.client_id,
    }));
    // A single-part recipient's context comes with its part; a multi-part one is read again under its lock.
    const known = found.flatMap((t): RecipientRow[] => (t.recipient_status === null || t.recipient_msisdn === null || t.recipient_client_id === null || t.recipient_sender === null ? [] : [{
      id: t.recipient_id, status: t.recipient_status, last_status: t.recipient_last_status, msisdn: t.recipient_msisdn, client_reference: t.recipient_client_reference,
      client_id: t.recipient_client_id, sender: t.recipient_sender, webhook_url: t.recipient_webhook_url,
      smpp_account_id: t.recipient_smpp_account_id ?? null, smpp_submit: t.recipient_smpp_submit ?? null, smpp_text: t.recipient_smpp_text ?? null,
      ...(t.recipient_campaign_id == null ? {} : { campaign_id: t.recipient_campaign_id }),
      ...(t.recipient_campaign_created_at == null ? {} : { campaign_created_at: t.recipient_campaign_created_at }),
    }]));
    const targets = found.map((t) => ({ transport: t.transport, message_id: t.message_id, part_id: t.part_id }));
    return { targets, ...await this.changes.factsOfParts(parts, known) };
  }

  async writeReceipts(plan: ReceiptsPlan, nowMs: number): Promise<void> {
    await q.insertReceipts(this.client, plan.receipts.map((r) => ({
      transport: r.transport, messageId: r.messageId, status: r.status, final: r.final, errorCode: r.errorCode, doneAt: r.doneAt, raw: r.raw,
      receivedAt: r.receivedAt, matchState: r.match.kind === 'matched' ? 'matched' : 'pending', partId: r.match.kind === 'matched' ? r.match.partId : null,
    })));
    await this.changes.writePartChanges(plan.changes, nowMs);
  }
}

export class PgOutcomeStepStore implements OutcomeStepStore<'async'> {
  private readonly changes: PgPartChangesStore;

  constructor(private readonly client: PgClient) {
    this.changes = new PgPartChangesStore(client);
  }

  async readOutcomeFacts(results: readonly SubmitResult[]): Promise<OutcomeFacts> {
    const pairs = acceptedPairs(results);
    const claimed = await q.lockPairsAndParts(this.client, pairs, [...new Set(results.flatMap((r) => r.parts.map((p) => p.id)))]);
    const unmatched = await q.unmatchedOf(this.client, pairs);
    const scope = new Set(partsInScope(results, unmatched).map((p) => p.id));
    const facts = await this.changes.factsOfParts(claimed.filter((p) => scope.has(p.id)));
    return { unmatched, recipients: facts.recipients, parts: [...claimed, ...facts.parts] };
  }

  async writeOutcomes(plan: OutcomesPlan, nowMs: number): Promise<void> {
    const { transitions } = plan;
    await q.markSubmitted(this.client, transitions.flatMap((t) => (t.kind === 'submitted' ? [t] : [])), nowMs);
    await q.requeue(this.client, transitions.flatMap((t) => (t.kind === 'requeue' ? [t] : [])), nowMs);
    await q.fail(this.client, transitions.flatMap((t) => (t.kind === 'fail' ? [t] : [])), nowMs);
    await q.matchReceipts(this.client, plan.matches);
    await this.changes.writePartChanges(plan.changes, nowMs);
  }
}

export class PgUnmatchedReceiptStore implements UnmatchedReceiptStore<'async'> {
  private readonly changes: PgPartChangesStore;

  constructor(private readonly client: PgClient) {
    this.changes = new PgPartChangesStore(client);
  }

  /**
   * Candidates read without locks, then their pairs locked (as every writer of a message id does:
   * taking a receipt row first would deadlock with a submitter holding the pair's lock), then the
   * candidates still unmatched locked FOR UPDATE: one another transaction matched or expired
   * meanwhile is passed over.
   */
  async readMatchable(limit: number): Promise<RematchFacts> {
    const candidates = await q.matchableCandidates(this.client, limit);
    if (candidates.length === 0) return { receipts: [], parts: [], recipients: [] };
    await q.lockPairs(this.client, candidates.map((c) => ({ transport: c.transport, messageId: c.message_id })));
    const still = new Set((await q.stillUnmatched(this.client, candidates.map((c) => c.id))).map((r) => r.id));
    // Read after the lock: a receipt for the same message id on another node may have just changed the part.
    const receipts = candidates.filter((c) => still.has(c.id));
    const parts = await q.partsById(this.client, [...new Set(receipts.map((r) => r.part_id))]);
    return { receipts, ...await this.changes.factsOfParts(parts) };
  }

  async writeMatches(plan: RematchPlan, nowMs: number): Promise<void> {
    await q.matchReceipts(this.client, plan.matches);
    await this.changes.writePartChanges(plan.changes, nowMs);
  }

  expireUnmatched(receivedBeforeMs: number): Promise<ExpiredReceipt[]> {
    return q.expireUnmatched(this.client, receivedBeforeMs);
  }
}

/** Every step's store over one unit's connection: the engine's store contract on PostgreSQL. */
export function pgStepStores(client: PgClient): EngineStepStores<'async'> {
  return {
    materialise: new PgMaterialiseStore(client, serializeDeliveryReceipt),
    claim: new PgClaimStore(client),
    recovery: new PgRecoveryStore(client),
    partChanges: new PgPartChangesStore(client),
    outcomes: new PgOutcomeStepStore(client),
    receipts: new PgReceiptStepStore(client),
    unmatchedReceipts: new PgUnmatchedReceiptStore(client),
    reroute: new PgRerouteStore(client),
  };
}
