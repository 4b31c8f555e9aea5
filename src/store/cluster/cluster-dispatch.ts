/**
 * The dispatch writes that must hold when several nodes share one PostgreSQL (issue 11 items 2
 * and 4), as single atomic units (src/store/ports.ts):
 *
 * - claims: due parts are taken with FOR UPDATE SKIP LOCKED, so concurrent claimers on any number
 *   of nodes never take the same part, and each taken part is stamped with the claiming node's id;
 * - fenced writes: an outcome is written only while the part is still 'submitting' under the same
 *   node's stamp. A node that stalled past its lease has had its parts requeued by a live node
 *   (requeueExpiredNodes, run by NodeRegistry.reapExpired), so its late writes find no row and are
 *   reported refused instead of overwriting the new owner's work;
 * - receipts on any bind: an SMSC may send a receipt on another node's bind, possibly before the
 *   submitting node has written the message id. Both sides first take a transaction-scoped advisory
 *   lock on (transport, message id), so whichever commits second sees the other: the submit side
 *   matches a receipt parked a moment before, the receipt side finds the part. Nothing is left to
 *   the sweep but receipts for ids no node ever wrote (and those the sweep re-matches later).
 */
import type { PgClient, PgPool } from '../pg/pool.js';

/** A part as a claiming lane needs it. */
export interface ClusterClaimedPart {
  id: number;
  recipient_id: number;
  campaign_id: string;
  part_number: number;
  parts_total: number;
  concat_reference: number;
  attempts: number;
  msisdn: string;
}

export interface AcceptedSubmit {
  partId: number;
  transport: string;
  messageId: string;
}

/** A parked receipt the submit side matched once its message id was written. */
export interface MatchedReceipt {
  receiptId: number;
  partId: number;
  status: string;
  final: boolean;
  errorCode: string | null;
}

export interface AcceptedResult {
  /** Parts no longer under this node's claim: the writes were refused (fenced). */
  refused: number[];
  /** Receipts that had arrived before the message id was written, now matched to their part. */
  matched: MatchedReceipt[];
}

export interface IncomingReceipt {
  transport: string;
  messageId: string;
  status: string;
  final: boolean;
  errorCode: string | null;
  doneAt: string | null;
  raw: string;
  receivedAtMs: number;
}

export type StoredReceipt =
  | { kind: 'matched'; receiptId: number; partId: number; recipientId: number }
  | { kind: 'parked'; receiptId: number };

/** Serialises the submit side and the receipt side of one message id across every node. */
const LOCK_MESSAGE_ID = `SELECT pg_advisory_xact_lock(hashtextextended($1 || ':' || $2, 0))`;

async function inTransaction<T>(pool: PgPool, body: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await body(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

export class ClusterDispatch {
  constructor(private readonly pool: PgPool) {}

  /**
   * Takes up to `limit` due parts of `transport` (of one campaign, when given), oldest due first,
   * skipping rows another node is taking at this moment, and stamps them 'submitting' by nodeId.
   */
  async claimParts(nodeId: string, transport: string, nowMs: number, limit: number, campaignId: string | null = null): Promise<ClusterClaimedPart[]> {
    const result = await this.pool.query<ClusterClaimedPart>(
      `WITH due AS (
         SELECT id FROM message_parts
         WHERE state = 'queued' AND transport = $1 AND next_attempt_at <= $2 AND ($4::text IS NULL OR campaign_id = $4)
         ORDER BY next_attempt_at, id LIMIT $3
         FOR UPDATE SKIP LOCKED
       )
       UPDATE message_parts p SET state = 'submitting', claimed_by = $5, updated_at = $2
       FROM due, recipients r
       WHERE p.id = due.id AND r.id = p.recipient_id
       RETURNING p.id, p.recipient_id, p.campaign_id, p.part_number, p.parts_total, p.concat_reference, p.attempts, r.msisdn`,
      [transport, nowMs, limit, campaignId, nodeId],
    );
    return result.rows.sort((a, b) => a.id - b.id);
  }

  /**
   * Writes accepted submits (message ids) for parts this node claimed, in one transaction; a part
   * that is no longer this node's (requeued after its lease expired) is refused, not written.
   * Receipts parked for those ids a moment earlier are matched in the same transaction.
   */
  async recordAccepted(nodeId: string, accepted: readonly AcceptedSubmit[], nowMs: number): Promise<AcceptedResult> {
    // A fixed lock order (by transport and id) keeps two batches from deadlocking on each other.
    const ordered = [...accepted].sort((a, b) => (a.transport === b.transport ? a.messageId.localeCompare(b.messageId) : a.transport.localeCompare(b.transport)));
    return inTransaction(this.pool, async (client) => {
      const refused: number[] = [];
      const matched: MatchedReceipt[] = [];
      for (const submit of ordered) {
        await client.query(LOCK_MESSAGE_ID, [submit.transport, submit.messageId]);
        const written = await client.query(
          `UPDATE message_parts SET state = 'submitted', message_id = $1, attempts = attempts + 1, submitted_at = $2,
             last_error_code = NULL, claimed_by = NULL, updated_at = $2
           WHERE id = $3 AND state = 'submitting' AND claimed_by = $4`,
          [submit.messageId, nowMs, submit.partId, nodeId],
        );
        if (written.rowCount !== 1) {
          refused.push(submit.partId);
          continue;
        }
        const parked = await client.query<{ id: number; status: string; final: number; error_code: string | null }>(
          `UPDATE receipts SET match_state = 'matched', part_id = $3
           WHERE match_state = 'pending' AND transport = $1 AND message_id = $2
           RETURNING id, status, final, error_code`,
          [submit.transport, submit.messageId, submit.partId],
        );
        for (const r of parked.rows.sort((a, b) => a.id - b.id)) {
          matched.push({ receiptId: r.id, partId: submit.partId, status: r.status, final: r.final === 1, errorCode: r.error_code });
        }
      }
      return { refused: refused.sort((a, b) => a - b), matched };
    });
  }

  /**
   * Stores a receipt that arrived on any node's bind: matched to its part when the message id is
   * known (state left to the caller's receipt logic), parked otherwise, under the same advisory
   * lock as recordAccepted so the two cannot miss each other.
   */
  async storeReceipt(receipt: IncomingReceipt): Promise<StoredReceipt> {
    return inTransaction(this.pool, async (client) => {
      await client.query(LOCK_MESSAGE_ID, [receipt.transport, receipt.messageId]);
      const part = await client.query<{ id: number; recipient_id: number }>(
        `SELECT id, recipient_id FROM message_parts WHERE transport = $1 AND message_id = $2 ORDER BY id DESC LIMIT 1`,
        [receipt.transport, receipt.messageId],
      );
      const found = part.rows[0];
      const inserted = await client.query<{ id: number }>(
        `INSERT INTO receipts (transport, message_id, status, final, error_code, done_at, raw, received_at, match_state, part_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
        [
          receipt.transport, receipt.messageId, receipt.status, receipt.final ? 1 : 0, receipt.errorCode, receipt.doneAt, receipt.raw,
          receipt.receivedAtMs, found === undefined ? 'pending' : 'matched', found?.id ?? null,
        ],
      );
      const receiptId = inserted.rows[0]?.id as number;
      return found === undefined ? { kind: 'parked', receiptId } : { kind: 'matched', receiptId, partId: found.id, recipientId: found.recipient_id };
    });
  }

  /** Receipts still parked for a (transport, message id) pair: what a sweep would re-match. */
  async parkedReceipts(transport: string): Promise<number> {
    const result = await this.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM receipts WHERE match_state = 'pending' AND transport = $1`, [transport]);
    return result.rows[0]?.n ?? 0;
  }

  /**
   * A NodeRegistry reap hook: inside the reaper's transaction, puts the expired nodes' in-flight
   * parts back in the queue (no attempt spent: whether the SMSC got them is unknown, so at-least-once
   * applies), releases their outbox leases and campaigns being processed. Returns the rows moved.
   */
  static async requeueExpiredNodes(client: PgClient, nodeIds: readonly string[]): Promise<number> {
    const parts = await client.query(
      `UPDATE message_parts SET state = 'queued', claimed_by = NULL WHERE claimed_by = ANY($1::text[]) AND state = 'submitting'`,
      [nodeIds],
    );
    const outbox = await client.query(
      `UPDATE webhook_outbox SET leased_by = NULL, lease_until = NULL WHERE leased_by = ANY($1::text[])`,
      [nodeIds],
    );
    const campaigns = await client.query(
      `UPDATE campaigns SET processing_by = NULL WHERE processing_by = ANY($1::text[])`,
      [nodeIds],
    );
    return (parts.rowCount ?? 0) + (outbox.rowCount ?? 0) + (campaigns.rowCount ?? 0);
  }
}
