/**
 * DispatchStore (src/store/sqlite/dispatch-store.ts, main's API) on PostgreSQL, plus the atomic units
 * several nodes on one database need:
 * - claimParts: due parts taken with FOR UPDATE SKIP LOCKED and marked 'submitting' in one
 *   statement, so two nodes claiming at once never get the same part and never wait for each other;
 * - the engine's submit outcomes and receipts (src/engine/postgres/step-stores.ts, with
 *   part-change-queries.ts) serialise on an advisory transaction lock per (transport, message id),
 *   so a receipt that lands on another node's bind before the submitter has written the message
 *   id is either found by the submitter (stored unmatched first) or finds the part, never neither.
 * - fencing: claimParts stamps each part with the claiming node's id
 *   (message_parts.claimed_by; null for a single gateway), and every write that ends a claim
 *   (markSubmitted, requeue, failPart) is refused unless the part is still 'submitting' under the
 *   same stamp. A node that stalled past its lease has had its parts requeued (requeueExpiredNodes,
 *   run by NodeRegistry.reapExpired) and perhaps claimed by another node, so its late writes
 *   change nothing and return false / undefined.
 * Every guard of the SQLite statements (state = 'queued', 'submitting', not final) is kept: a write
 * whose part moved on changes nothing and returns false.
 */
import type {
  ClaimablePart, DispatchStore, DueCampaign, ExpiredReceipt, PartForReceipt, PartStatusRow, PendingReceipt, ReceiptInsert,
  RecipientContext, WaitingRecipient,
} from '../sqlite/dispatch-store.js';
import type { NewPart } from '../dispatch-steps.js';
import { insertReceipts } from './part-change-queries.js';
import type { RecipientStatus } from '../entities.js';
import type { Async } from '../ports.js';
import { PgClaimStore } from './claim-queries.js';
import { CLOSE_CAMPAIGNS, insertParts, markDispatched } from './materialise-queries.js';
import { PgRecoveryStore } from './recovery-queries.js';
import { changes, inTransaction, row, rows, type PgQueryable, type PgRunner } from './pool.js';

const QUEUED_CAMPAIGNS = `WITH RECURSIVE next(campaign_id, n) AS (
    SELECT (SELECT MIN(campaign_id) FROM message_parts WHERE transport = $1 AND state = 'queued' AND campaign_id > $2), 1
    UNION ALL
    SELECT (SELECT MIN(campaign_id) FROM message_parts WHERE transport = $1 AND state = 'queued' AND campaign_id > next.campaign_id), n + 1
    FROM next WHERE next.campaign_id IS NOT NULL AND n < $3
  )
  SELECT campaign_id FROM next WHERE campaign_id IS NOT NULL`;

const CLAIMABLE_COLUMNS = 'p.id, p.recipient_id, p.campaign_id, p.part_number, p.parts_total, p.concat_reference, p.attempts, r.msisdn';

const INSERT_RECEIPT = `INSERT INTO receipts (transport, message_id, status, final, error_code, done_at, raw, received_at, match_state, part_id)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`;

const PART_BY_MESSAGE_ID = 'SELECT id, recipient_id, state FROM message_parts WHERE transport = $1 AND message_id = $2 ORDER BY id DESC LIMIT 1';

export class PgDispatchStore implements Async<DispatchStore> {
  /** On the pool each method is its own unit; on a connection inside a transaction they all join it (pool.ts PgRunner). */
  constructor(private readonly pool: PgRunner) {}

  /**
   * Requeues the parts left 'submitting' under one claim stamp (no attempt spent): a node's own at
   * its clean stop, or a single gateway's (null) at start. Never another live node's.
   */
  requeueSubmittingOf(nodeId: string | null, nowMs: number): Promise<number> {
    return new PgRecoveryStore(this.pool).requeueSubmitting(nodeId, nowMs);
  }

  dueCampaigns(nowMs: number, limit: number): Promise<DueCampaign[]> {
    return rows<DueCampaign>(this.pool,
      `SELECT id, client_id, sender, text, text_sent, smpp_submit FROM campaigns
       WHERE state = 'ready' AND dispatched_at IS NULL AND COALESCE(send_at, 0) <= $1
       ORDER BY send_at, created_at LIMIT $2`, [nowMs, limit]);
  }

  waitingRecipients(campaignId: string, limit: number): Promise<WaitingRecipient[]> {
    return rows<WaitingRecipient>(this.pool,
      `SELECT id, msisdn FROM recipients WHERE campaign_id = $1 AND dispatch_state = 'waiting' ORDER BY id LIMIT $2`, [campaignId, limit]);
  }

  async insertPart(part: NewPart, nowMs: number): Promise<void> {
    await insertPart(this.pool, part, nowMs);
  }

  /** The campaigns named (any order; a campaign that is gone is left out), in one statement. */
  async campaignTexts(campaignIds: readonly string[]): Promise<DueCampaign[]> {
    if (campaignIds.length === 0) return [];
    return rows<DueCampaign>(this.pool, 'SELECT id, client_id, sender, text, text_sent, smpp_submit FROM campaigns WHERE id = ANY($1)', [[...campaignIds]]);
  }

  async markRecipientDispatched(recipientId: number, nowMs: number): Promise<void> {
    await changes(this.pool, `UPDATE recipients SET dispatch_state = 'dispatched', updated_at = $1 WHERE id = $2 AND dispatch_state = 'waiting'`,
      [nowMs, recipientId]);
  }

  async markCampaignDispatchedIfDone(campaignId: string, nowMs: number): Promise<boolean> {
    return (await rows(this.pool, CLOSE_CAMPAIGNS, [nowMs, [campaignId]])).length > 0;
  }

  async queuedCampaigns(transport: string, afterCampaignId: string, limit: number): Promise<string[]> {
    return (await rows<{ campaign_id: string }>(this.pool, QUEUED_CAMPAIGNS, [transport, afterCampaignId, limit])).map((r) => r.campaign_id);
  }

  claimableInCampaign(transport: string, campaignId: string, nowMs: number, limit: number): Promise<ClaimablePart[]> {
    return rows<ClaimablePart>(this.pool,
      `SELECT ${CLAIMABLE_COLUMNS} FROM message_parts p JOIN recipients r ON r.id = p.recipient_id
       WHERE p.state = 'queued' AND p.transport = $1 AND p.campaign_id = $2 AND p.next_attempt_at <= $3
       ORDER BY p.next_attempt_at, p.id LIMIT $4`, [transport, campaignId, nowMs, limit]);
  }

  /**
   * Claims up to `limit` due parts of one campaign on the transport, stamped with `nodeId`: the
   * claim step's write (claim-queries.ts) with one share.
   */
  claimParts(transport: string, campaignId: string, nowMs: number, limit: number, nodeId: string | null = null): Promise<ClaimablePart[]> {
    return new PgClaimStore(this.pool).writeClaim(transport, { shares: [{ campaignId, take: limit }], sendRates: [] }, nowMs, nodeId);
  }

  /** markRecipientDispatched for many recipients, one statement. */
  markRecipientsDispatched(recipientIds: readonly number[], nowMs: number): Promise<void> {
    return markDispatched(this.pool, recipientIds, nowMs);
  }

  /** insertPart for many parts in one statement, ids assigned in the parts' order (as materialising writes them). */
  insertParts(parts: readonly NewPart[], nowMs: number): Promise<void> {
    return insertParts(this.pool, parts, nowMs);
  }

  /** markSubmitting for many parts, one statement; the ids that were still 'queued' and are now 'submitting'. */
  async markManySubmitting(partIds: readonly number[], nowMs: number): Promise<Set<number>> {
    if (partIds.length === 0) return new Set();
    const marked = await rows<{ id: number }>(this.pool,
      `UPDATE message_parts SET state = 'submitting', updated_at = $1 WHERE id = ANY($2::bigint[]) AND state = 'queued' RETURNING id`, [nowMs, partIds]);
    return new Set(marked.map((r) => r.id));
  }

  async markSubmitting(partId: number, nowMs: number): Promise<boolean> {
    return (await changes(this.pool, `UPDATE message_parts SET state = 'submitting', updated_at = $1 WHERE id = $2 AND state = 'queued'`,
      [nowMs, partId])) > 0;
  }

  async markSubmitted(partId: number, messageId: string, nowMs: number, nodeId: string | null = null): Promise<boolean> {
    return (await markSubmitted(this.pool, partId, messageId, nowMs, nodeId)) > 0;
  }

  async requeue(
    partId: number, attempts: number, nextAttemptAt: number, lastStatus: string | null, errorCode: string | null, nowMs: number, nodeId: string | null = null,
  ): Promise<boolean> {
    return (await changes(this.pool,
      `UPDATE message_parts SET state = 'queued', attempts = $1, next_attempt_at = $2, last_status = $3, last_error_code = $4, updated_at = $5,
         claimed_by = NULL
       WHERE id = $6 AND state = 'submitting' AND claimed_by IS NOT DISTINCT FROM $7`, [attempts, nextAttemptAt, lastStatus, errorCode, nowMs, partId, nodeId])) > 0;
  }

  async failPart(partId: number, attempts: number, status: string, errorCode: string | null, nowMs: number, nodeId: string | null = null): Promise<boolean> {
    return (await changes(this.pool,
      `UPDATE message_parts SET state = 'undelivered', attempts = $1, last_status = $2, last_error_code = $3, final_at = $4, updated_at = $4,
         claimed_by = NULL
       WHERE id = $5 AND state = 'submitting' AND claimed_by IS NOT DISTINCT FROM $6`, [attempts, status, errorCode, nowMs, partId, nodeId])) > 0;
  }

  partByMessageId(transport: string, messageId: string): Promise<PartForReceipt | undefined> {
    return row<PartForReceipt>(this.pool, PART_BY_MESSAGE_ID, [transport, messageId]);
  }

  /** Moves a part to its final state unless it already has one (a final state is never overwritten). */
  async finishPart(partId: number, state: 'delivered' | 'undelivered', status: string, errorCode: string | null, nowMs: number): Promise<boolean> {
    return (await changes(this.pool,
      `UPDATE message_parts SET state = $1, last_status = $2, last_error_code = $3, final_at = $4, updated_at = $4
       WHERE id = $5 AND state NOT IN ('delivered', 'undelivered')`, [state, status, errorCode, nowMs, partId])) > 0;
  }

  async notePartStatus(partId: number, status: string, nowMs: number): Promise<boolean> {
    return (await changes(this.pool,
      `UPDATE message_parts SET last_status = $1, updated_at = $2 WHERE id = $3 AND state NOT IN ('delivered', 'undelivered')`,
      [status, nowMs, partId])) > 0;
  }

  insertReceipt(r: ReceiptInsert): Promise<number> {
    return insertReceipt(this.pool, r);
  }

  /** Inserts receipts in one statement (arrays unnested server-side), in order. */
  insertReceipts(receipts: readonly ReceiptInsert[]): Promise<void> {
    return insertReceipts(this.pool, receipts);
  }

  pendingReceipts(transport: string, messageId: string): Promise<PendingReceipt[]> {
    return rows<PendingReceipt>(this.pool,
      `SELECT id, status, final, error_code FROM receipts WHERE match_state = 'pending' AND transport = $1 AND message_id = $2 ORDER BY id`,
      [transport, messageId]);
  }

  async matchReceipt(receiptId: number, partId: number): Promise<void> {
    await changes(this.pool, `UPDATE receipts SET match_state = 'matched', part_id = $1 WHERE id = $2`, [partId, receiptId]);
  }

  async expireReceipts(receivedBeforeMs: number): Promise<ExpiredReceipt[]> {
    const expired = await rows<ExpiredReceipt>(this.pool,
      `UPDATE receipts SET match_state = 'expired' WHERE match_state = 'pending' AND received_at < $1
       RETURNING id, transport, message_id, status, received_at`, [receivedBeforeMs]);
    return expired.sort((a, b) => a.id - b.id);
  }

  recipientContext(recipientId: number): Promise<RecipientContext | undefined> {
    return row<RecipientContext>(this.pool,
      `SELECT r.id, r.status, r.last_status, r.msisdn, r.client_reference, c.client_id, c.sender, cl.webhook_url
       FROM recipients r JOIN campaigns c ON c.id = r.campaign_id JOIN clients cl ON cl.id = c.client_id
       WHERE r.id = $1`, [recipientId]);
  }

  partsOfRecipient(recipientId: number): Promise<PartStatusRow[]> {
    return rows<PartStatusRow>(this.pool,
      'SELECT part_number, state, last_status, final_at FROM message_parts WHERE recipient_id = $1 ORDER BY part_number', [recipientId]);
  }

  async updateRecipient(recipientId: number, status: RecipientStatus, lastStatus: string | null, nowMs: number): Promise<void> {
    await changes(this.pool, 'UPDATE recipients SET status = $1, last_status = $2, updated_at = $3 WHERE id = $4', [status, lastStatus, nowMs, recipientId]);
  }

  async messageIdsAwaitingReceipt(transport: string): Promise<string[]> {
    return (await rows<{ message_id: string }>(this.pool,
      `SELECT message_id FROM message_parts WHERE transport = $1 AND state = 'submitted' AND message_id IS NOT NULL ORDER BY id`, [transport]))
      .map((r) => r.message_id);
  }

  /**
   * Crash recovery of a single gateway: every part left 'submitting' is queued again. Not for a
   * cluster, where it would requeue live peers' parts too: there NodeRegistry.reapExpired with
   * requeueExpiredNodes (node-takeover.ts) requeues only expired nodes' parts.
   */
  requeueAllSubmitting(nowMs: number): Promise<number> {
    return this.requeueSubmittingOf(null, nowMs);
  }

  /** Recipients marked dispatched without any part go back to waiting, their campaigns to not dispatched; one transaction. */
  reopenOrphanedRecipients(): Promise<number> {
    return inTransaction(this.pool, (client) => new PgRecoveryStore(client).reopenOrphanedRecipients());
  }
}

async function insertPart(db: PgQueryable, part: NewPart, nowMs: number): Promise<void> {
  await changes(db,
    `INSERT INTO message_parts (recipient_id, campaign_id, part_number, parts_total, concat_reference, transport, state,
       last_status, next_attempt_at, final_at, updated_at, credits)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [part.recipientId, part.campaignId, part.partNumber, part.partsTotal, part.concatReference, part.transport, part.state,
      part.lastStatus, part.nextAttemptAt, part.finalAt, nowMs, part.credits ?? 0]);
}

/** Fenced on the claim: only the node that claimed the part (null: a single gateway) writes its outcome. */
function markSubmitted(db: PgQueryable, partId: number, messageId: string, nowMs: number, nodeId: string | null): Promise<number> {
  return changes(db,
    `UPDATE message_parts SET state = 'submitted', message_id = $1, attempts = attempts + 1, submitted_at = $2,
       last_error_code = NULL, claimed_by = NULL, updated_at = $2
     WHERE id = $3 AND state = 'submitting' AND claimed_by IS NOT DISTINCT FROM $4`, [messageId, nowMs, partId, nodeId]);
}

function insertReceipt(db: PgQueryable, r: ReceiptInsert): Promise<number> {
  return row<{ id: number }>(db, INSERT_RECEIPT,
    [r.transport, r.messageId, r.status, r.final ? 1 : 0, r.errorCode, r.doneAt, r.raw, r.receivedAt, r.matchState, r.partId]).then((x) => x!.id);
}
