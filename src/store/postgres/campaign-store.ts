/**
 * CampaignStore (src/store/sqlite/campaign-store.ts) on PostgreSQL: accepting a campaign, turning it into
 * recipients, the summary counts and the sender list, with the same guards. A campaign's state is
 * read FOR UPDATE inside the transactions that depend on it, so a concurrent markFailed (another
 * node) waits instead of interleaving.
 *
 * In a cluster each campaign is processed to ready by one node: a node passes
 * its id (NodeRegistry.identity.id) as the trailing `nodeId`. Its claim stamps
 * campaigns.processing_by, and takes a 'queued' campaign or a 'processing' one whose stamp is NULL
 * (its node was reaped: requeueExpiredNodes clears the stamp) or its own; one conditional UPDATE, so
 * of two nodes claiming at once the second re-reads the row after the first commits and gets
 * nothing. Every later write of that campaign by the node (deletePartialRecipients,
 * appendRecipients, markReady, markFailed) is fenced on the stamp: a node whose claim was taken over
 * changes nothing. Without a node id (one gateway) the SQLite semantics hold unchanged.
 */
import { releaseOf } from '../../accounts/credits.js';
import {
  SUMMARY_CACHE_DEFAULTS, type CampaignInsert, type CampaignStore, type CampaignToProcess, type NewCampaign, type ReadyCampaign,
  type RecipientToWrite, type SenderEntry, type StatusCounts, type SummaryCacheOptions,
} from '../sqlite/campaign-store.js';
import type { CampaignRow, CampaignState, RecipientStatus } from '../entities.js';
import type { Async } from '../ports.js';
import { applyCreditMovements, reserveCredits } from './credit-ledger.js';
import { completeKey, holdsKey } from './idempotency-store.js';
import { changes, inTransaction, row, rows, type PgClient, type PgPool } from './pool.js';
import type { WakeChannel } from './wakeups.js';

/** The wake-up channels (src/store/postgres/wakeups.ts), inlined into the statements that notify them. */
const CAMPAIGNS_CHANNEL: WakeChannel = 'smsgate_campaigns';
const PARTS_CHANNEL: WakeChannel = 'smsgate_parts';

const CLAIMED_COLUMNS = 'id, client_id, state, sender, text, send_at_local, request_recipients, created_at, credits_reserved';

/** What node $2 may claim: queued, or processing unstamped (its node reaped) or by itself. */
const CLAIMABLE_BY_NODE = `(state = 'queued' OR (state = 'processing' AND (processing_by IS NULL OR processing_by = $2)))`;

interface CachedCounts {
  counts: StatusCounts;
  countedAtMs: number;
}

export class PgCampaignStore implements Async<CampaignStore> {
  private readonly summaryCache: SummaryCacheOptions;
  private readonly cachedCounts = new Map<string, CachedCounts>();

  constructor(private readonly pool: PgPool, summaryCache: Partial<SummaryCacheOptions> = {}) {
    this.summaryCache = { ...SUMMARY_CACHE_DEFAULTS, now: () => performance.now(), ...summaryCache };
  }

  /**
   * One transaction: the Idempotency-Key checked (its row locked), the reservation (reserveCredits
   * locks the client's credits row FOR UPDATE, so reservations on every node are serialised), the
   * row, the key marked done, and a wake-up of every node's campaign processor (LISTEN/NOTIFY wakes
   * nodes) delivered when it commits, so whichever node is free claims it. Nothing is written
   * unless the row is.
   */
  insertCampaign(c: NewCampaign): Promise<CampaignInsert> {
    return inTransaction(this.pool, async (client): Promise<CampaignInsert> => {
      const held = c.idempotencyKey ?? null;
      if (held !== null && !(await holdsKey(client, c.clientId, held))) return { outcome: 'key-lost' };
      let creditsReserved: number | null = null;
      const needed = c.creditsNeeded ?? null;
      if (needed !== null) {
        const reservation = await reserveCredits(client, c.clientId, c.id, needed, c.createdAtMs);
        if (reservation.outcome === 'short') return reservation;
        if (reservation.outcome === 'reserved') creditsReserved = reservation.credits;
      }
      await changes(client,
        `WITH inserted AS (
           INSERT INTO campaigns (id, client_id, user_id, state, name, sender, text, send_at_local, create_as_draft, should_save_list,
             request_recipients, created_at, credits_reserved)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
           RETURNING id, state)
         SELECT pg_notify('${CAMPAIGNS_CHANNEL}', id) FROM inserted WHERE state = 'queued'`,
        [c.id, c.clientId, c.userId, c.state, c.name, c.sender, c.text, c.sendAtLocal, c.createAsDraft ? 1 : 0, c.shouldSaveList ? 1 : 0,
          c.requestRecipientsJson, c.createdAtMs, creditsReserved]);
      if (held !== null) await completeKey(client, c.clientId, held.key, c.id);
      return { outcome: 'stored', creditsReserved };
    });
  }

  findCampaign(id: string): Promise<CampaignRow | undefined> {
    return row<CampaignRow>(this.pool, 'SELECT * FROM campaigns WHERE id = $1', [id]);
  }

  /**
   * With a node id, only the campaigns that node may claim (claimForProcessing): those another live
   * node is processing would otherwise fill the LIMIT and starve this node of the rest.
   */
  async unprocessedCampaignIds(maxCampaigns: number, nodeId?: string): Promise<string[]> {
    const found = nodeId === undefined
      ? await rows<{ id: string }>(this.pool,
        `SELECT id FROM campaigns WHERE state IN ('queued', 'processing') ORDER BY created_at, id COLLATE "C" LIMIT $1`, [maxCampaigns])
      : await rows<{ id: string }>(this.pool,
        `SELECT id FROM campaigns WHERE ${CLAIMABLE_BY_NODE} ORDER BY created_at, id COLLATE "C" LIMIT $1`, [maxCampaigns, nodeId]);
    return found.map((r) => r.id);
  }

  claimForProcessing(id: string, nodeId?: string): Promise<CampaignToProcess | undefined> {
    if (nodeId === undefined) {
      return row<CampaignToProcess>(this.pool,
        `UPDATE campaigns SET state = 'processing' WHERE id = $1 AND state IN ('queued', 'processing')
         RETURNING ${CLAIMED_COLUMNS}`, [id]);
    }
    return row<CampaignToProcess>(this.pool,
      `UPDATE campaigns SET state = 'processing', processing_by = $2
       WHERE id = $1 AND ${CLAIMABLE_BY_NODE}
       RETURNING ${CLAIMED_COLUMNS}`, [id, nodeId]);
  }

  deletePartialRecipients(campaignId: string, maxRows: number, nodeId?: string): Promise<number | undefined> {
    return inTransaction(this.pool, async (client) => {
      if (!(await isProcessing(client, campaignId, nodeId))) return undefined;
      return changes(client, 'DELETE FROM recipients WHERE id IN (SELECT id FROM recipients WHERE campaign_id = $1 LIMIT $2)', [campaignId, maxRows]);
    });
  }

  /** One INSERT of all the rows (arrays unnested server-side), after the 'processing' check. */
  appendRecipients(campaignId: string, recipients: readonly RecipientToWrite[], updatedAtMs: number, nodeId?: string): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      if (!(await isProcessing(client, campaignId, nodeId))) return false;
      if (recipients.length === 0) return true;
      await changes(client,
        `INSERT INTO recipients (campaign_id, msisdn, client_reference, dispatch_state, status, updated_at, credits_per_part)
         SELECT $1::text, m, r, 'waiting', 'pending', $4::bigint, p FROM unnest($2::text[], $3::text[], $5::bigint[]) AS t(m, r, p)`,
        [campaignId, recipients.map((r) => r.msisdn), recipients.map((r) => r.clientReference), updatedAtMs,
          recipients.map((r) => r.creditsPerPart ?? 0)]);
      return true;
    });
  }

  /**
   * With a node id: only while that node's claim stands (processing_by), which it then clears.
   * The same statement wakes every node's engine (at commit): the campaign's recipients are theirs
   * to materialise and send now. Its credit movements (ready.credits) commit with it.
   */
  markReady(ready: ReadyCampaign, nodeId?: string): Promise<boolean> {
    const params = [ready.campaignId, ready.textSent, ready.encoding, ready.partsPerMessage, ready.totalSent, ready.skippedCount, ready.sendAtMs,
      ready.readyAtMs];
    const set = `state = 'ready', request_recipients = NULL, text_sent = $2, encoding = $3, parts_per_message = $4,
         total_sent = $5, skipped_count = $6, send_at = $7, ready_at = $8`;
    const wake = (update: string): string => `WITH marked AS (${update} RETURNING id) SELECT pg_notify('${PARTS_CHANNEL}', id) FROM marked`;
    return inTransaction(this.pool, async (client) => {
      const marked = nodeId === undefined
        ? await changes(client, wake(`UPDATE campaigns SET ${set} WHERE id = $1 AND state = 'processing'`), params)
        : await changes(client, wake(`UPDATE campaigns SET ${set}, processing_by = NULL WHERE id = $1 AND state = 'processing' AND processing_by = $9`),
          [...params, nodeId]);
      if (marked !== 1) return false;
      await applyCreditMovements(client, ready.credits ?? [], ready.readyAtMs);
      return true;
    });
  }

  /** With a node id: only the campaign that node is processing (its claim still standing). */
  markFailed(id: string, reason: string, nodeId?: string): Promise<void> {
    return inTransaction(this.pool, async (client) => {
      const failed = nodeId === undefined
        ? await changes(client, `UPDATE campaigns SET state = 'failed', failure_reason = $1 WHERE id = $2 AND state IN ('queued', 'processing')`,
          [reason, id])
        : await changes(client,
          `UPDATE campaigns SET state = 'failed', failure_reason = $1, processing_by = NULL WHERE id = $2 AND state = 'processing' AND processing_by = $3`,
          [reason, id, nodeId]);
      if (failed !== 1) return;
      await changes(client, 'DELETE FROM recipients WHERE campaign_id = $1', [id]);
      // Never sent: all it reserved goes back, with the failure.
      const reserved = await row<Pick<CampaignRow, 'client_id' | 'credits_reserved'>>(client,
        'SELECT client_id, credits_reserved FROM campaigns WHERE id = $1', [id]);
      if (reserved !== undefined && reserved.credits_reserved !== null) {
        await applyCreditMovements(client, releaseOf(reserved.client_id, id, reserved.credits_reserved), Date.now());
      }
    });
  }

  /** As CampaignStore.statusCounts: large campaigns counted at most once per summaryCache.ttlMs (per node). */
  async statusCounts(campaignId: string): Promise<StatusCounts> {
    const nowMs = this.summaryCache.now();
    const cached = this.cachedCounts.get(campaignId);
    if (cached !== undefined && nowMs - cached.countedAtMs < this.summaryCache.ttlMs) return { ...cached.counts };
    const counts: StatusCounts = { pending: 0, delivered: 0, undelivered: 0 };
    const found = await rows<{ status: RecipientStatus; n: number }>(this.pool,
      'SELECT status, COUNT(*) AS n FROM recipients WHERE campaign_id = $1 GROUP BY status', [campaignId]);
    for (const r of found) counts[r.status] = r.n;
    for (const [id, entry] of this.cachedCounts) {
      if (nowMs - entry.countedAtMs >= this.summaryCache.ttlMs) this.cachedCounts.delete(id);
    }
    if (counts.pending + counts.delivered + counts.undelivered >= this.summaryCache.minRecipients) {
      this.cachedCounts.set(campaignId, { counts, countedAtMs: nowMs });
    }
    return { ...counts };
  }

  senders(clientId: number): Promise<SenderEntry[]> {
    // COLLATE "C": byte order, as SQLite's BINARY, whatever the database's locale.
    return rows<SenderEntry>(this.pool, 'SELECT name, type FROM senders WHERE client_id = $1 ORDER BY name COLLATE "C"', [clientId]);
  }

  async senderType(clientId: number, name: string): Promise<number | undefined> {
    return (await row<{ type: number }>(this.pool, 'SELECT type FROM senders WHERE client_id = $1 AND name = $2', [clientId, name]))?.type;
  }
}

/** 'processing', and with a node id still claimed by that node; the row stays locked to the end of the transaction. */
async function isProcessing(client: PgClient, campaignId: string, nodeId?: string): Promise<boolean> {
  const found = await row<{ state: CampaignState; processing_by: string | null }>(client,
    'SELECT state, processing_by FROM campaigns WHERE id = $1 FOR UPDATE', [campaignId]);
  return found?.state === 'processing' && (nodeId === undefined || found.processing_by === nodeId);
}
