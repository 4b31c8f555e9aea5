/**
 * The campaign area's SQL: accepting a campaign, turning it into recipients, the summary counts and
 * the account's sender list. Prepared statements on the raw better-sqlite3 handle (hot path: a
 * 100,000-recipient campaign must be written in well under a second). Synchronous by design: every
 * method is one short transaction; the processor writes a large campaign as a series of them.
 */
import type { Statement } from 'better-sqlite3';
import { releaseOf, type CreditMovement } from '../../accounts/credits.js';
import type { CampaignRow, CampaignState, RecipientStatus } from '../entities.js';
import { SqliteCreditLedger } from './credit-ledger.js';
import type { SqliteDatabase } from './database.js';
import { commitWithoutOwnSync } from './deferred-sync.js';
import { IdempotencyKeyGuard, type HeldKey } from './idempotency-store.js';

/** What POST /v1/campaign stores before it answers 202. */
export interface NewCampaign {
  id: string;
  clientId: number;
  userId: number;
  state: Extract<CampaignState, 'queued' | 'draft'>;
  name: string;
  sender: string;
  text: string;
  sendAtLocal: string | null;
  createAsDraft: boolean;
  shouldSaveList: boolean;
  /**
   * JSON of the request's recipients, kept until processing turns them into rows; null when they
   * were stored as slices in campaign_request_chunks (large requests, CampaignRequestStore).
   */
  requestRecipientsJson: string | null;
  createdAtMs: number;
  /**
   * The campaign's most it can cost, reserved from the client's credits in the transaction that
   * stores the row; null or left out: nothing reserved (a draft, never sent by this API).
   */
  creditsNeeded?: number | null;
  /** The Idempotency-Key the request holds: the row is stored only while it still does, and marks it done. */
  idempotencyKey?: HeldKey | null;
}

/**
 * What storing a campaign did. `stored`: the row is committed, with what was reserved (null: the
 * client is unlimited, or nothing was asked). Otherwise nothing at all was written: `short`, too
 * few credits available; `key-lost`, the request's Idempotency-Key was taken over meanwhile.
 */
export type CampaignInsert =
  | { outcome: 'stored'; creditsReserved: number | null }
  | { outcome: 'short'; needed: number; available: number }
  | { outcome: 'key-lost' };

/** The columns the processor needs to turn a campaign into recipients. */
export type CampaignToProcess = Pick<CampaignRow, 'id' | 'client_id' | 'state' | 'sender' | 'text' | 'send_at_local' | 'request_recipients' | 'created_at' | 'credits_reserved'>;

export interface RecipientToWrite {
  msisdn: string;
  clientReference: string | null;
  /** recipients.credits_per_part: the price of one part to it, fixed now (0 or left out: nothing charged). */
  creditsPerPart?: number;
}

/** What marks a campaign ready, once its recipients are written. */
export interface ReadyCampaign {
  campaignId: string;
  /** Accepted recipients, the summary's totalSent. */
  totalSent: number;
  textSent: string;
  encoding: string;
  partsPerMessage: number;
  sendAtMs: number;
  skippedCount: number;
  readyAtMs: number;
  /**
   * Ledger rows written with the campaign's ready mark (the reservation its skipped and duplicate
   * recipients will never use, released), in the same transaction; none when left out.
   */
  credits?: readonly CreditMovement[];
}

export interface StatusCounts {
  pending: number;
  delivered: number;
  undelivered: number;
}

export interface SenderEntry {
  name: string;
  type: number;
}

/**
 * Summary counts of a large campaign are kept this long. Counting walks the (campaign_id, status)
 * index (EXPLAIN QUERY PLAN: "SEARCH recipients USING COVERING INDEX recipients_status"), one entry
 * per recipient, so a dashboard polling a 100,000-recipient campaign 10 times a second cost 7.6% of
 * the gateway's CPU. A summary at most this old is as good for a poller; small campaigns (tests, one
 * message) are below minRecipients and always counted fresh.
 */
export const SUMMARY_CACHE_DEFAULTS = { ttlMs: 250, minRecipients: 10_000 } as const;

export interface SummaryCacheOptions {
  ttlMs: number;
  /** Campaigns with fewer recipients than this are counted on every call. */
  minRecipients: number;
  /** Monotonic clock in ms; default performance.now. */
  now: () => number;
}

interface CachedCounts {
  counts: StatusCounts;
  countedAtMs: number;
}

/** Rows per multi-row INSERT: 7 columns x 100 rows stays far below SQLite's 32,766 variable limit. */
const RECIPIENT_ROWS_PER_INSERT = 100;
const RECIPIENT_COLUMNS = 7;

/**
 * The campaigns of one gateway's SQLite file. The processing methods take a trailing `nodeId` that
 * this store ignores: one gateway owns every claim (src/common/node-id.ts SINGLE_GATEWAY). It is
 * there so `Async<CampaignStore>` carries it to PostgreSQL's PgCampaignStore, where it stamps and
 * fences each campaign's processing to one node.
 */
export class CampaignStore {
  private readonly insertCampaignStmt: Statement;
  private readonly findCampaignStmt: Statement;
  private readonly unprocessedStmt: Statement;
  private readonly markProcessingStmt: Statement;
  private readonly deleteRecipientsStmt: Statement;
  private readonly deleteRecipientsChunkStmt: Statement;
  private readonly campaignStateStmt: Statement;
  private readonly insertRecipientBatchStmt: Statement;
  private readonly insertRecipientStmt: Statement;
  private readonly markReadyStmt: Statement;
  private readonly markFailedStmt: Statement;
  private readonly statusCountsStmt: Statement;
  private readonly sendersStmt: Statement;
  private readonly senderTypeStmt: Statement;
  private readonly reservedOfStmt: Statement<[string], Pick<CampaignRow, 'client_id' | 'credits_reserved'>>;
  private readonly summaryCache: SummaryCacheOptions;
  private readonly cachedCounts = new Map<string, CachedCounts>();
  private readonly ledger: SqliteCreditLedger;
  private readonly keys: IdempotencyKeyGuard;

  constructor(private readonly db: SqliteDatabase, summaryCache: Partial<SummaryCacheOptions> = {}) {
    this.summaryCache = { ...SUMMARY_CACHE_DEFAULTS, now: () => performance.now(), ...summaryCache };
    this.ledger = new SqliteCreditLedger(db);
    this.keys = new IdempotencyKeyGuard(db);
    this.insertCampaignStmt = db.prepare(
      `INSERT INTO campaigns (id, client_id, user_id, state, name, sender, text, send_at_local, create_as_draft,
         should_save_list, request_recipients, created_at, credits_reserved)
       VALUES (@id, @clientId, @userId, @state, @name, @sender, @text, @sendAtLocal, @createAsDraft,
         @shouldSaveList, @requestRecipientsJson, @createdAtMs, @creditsReserved)`,
    );
    this.reservedOfStmt = db.prepare('SELECT client_id, credits_reserved FROM campaigns WHERE id = ?');
    this.findCampaignStmt = db.prepare('SELECT * FROM campaigns WHERE id = ?');
    this.unprocessedStmt = db.prepare(
      `SELECT id FROM campaigns WHERE state IN ('queued', 'processing') ORDER BY created_at, id LIMIT ?`,
    );
    this.markProcessingStmt = db.prepare(
      `UPDATE campaigns SET state = 'processing' WHERE id = ? AND state IN ('queued', 'processing')
       RETURNING id, client_id, state, sender, text, send_at_local, request_recipients, created_at, credits_reserved`,
    );
    this.deleteRecipientsStmt = db.prepare('DELETE FROM recipients WHERE campaign_id = ?');
    this.deleteRecipientsChunkStmt = db.prepare(
      'DELETE FROM recipients WHERE id IN (SELECT id FROM recipients WHERE campaign_id = ? LIMIT ?)',
    );
    this.campaignStateStmt = db.prepare('SELECT state FROM campaigns WHERE id = ?');
    const rowPlaceholders = `(${Array.from({ length: RECIPIENT_COLUMNS }, () => '?').join(', ')})`;
    const insertPrefix = `INSERT INTO recipients (campaign_id, msisdn, client_reference, dispatch_state, status, updated_at, credits_per_part) VALUES `;
    this.insertRecipientBatchStmt = db.prepare(
      insertPrefix + Array.from({ length: RECIPIENT_ROWS_PER_INSERT }, () => rowPlaceholders).join(', '),
    );
    this.insertRecipientStmt = db.prepare(insertPrefix + rowPlaceholders);
    this.markReadyStmt = db.prepare(
      `UPDATE campaigns SET state = 'ready', request_recipients = NULL, text_sent = @textSent, encoding = @encoding,
         parts_per_message = @partsPerMessage, total_sent = @totalSent, skipped_count = @skippedCount,
         send_at = @sendAtMs, ready_at = @readyAtMs
       WHERE id = @campaignId AND state = 'processing'`,
    );
    this.markFailedStmt = db.prepare(
      `UPDATE campaigns SET state = 'failed', failure_reason = ? WHERE id = ? AND state IN ('queued', 'processing')`,
    );
    this.statusCountsStmt = db.prepare('SELECT status, COUNT(*) AS n FROM recipients WHERE campaign_id = ? GROUP BY status');
    this.sendersStmt = db.prepare('SELECT name, type FROM senders WHERE client_id = ? ORDER BY name');
    this.senderTypeStmt = db.prepare('SELECT type FROM senders WHERE client_id = ? AND name = ?');
  }

  /**
   * The row, its reservation (SqliteCreditLedger.reserve) and its Idempotency-Key marked done, in
   * one IMMEDIATE transaction: the credits check and the write are one unit against every other
   * writer of the file, so concurrent requests never reserve past what is available. With
   * synchronous=FULL it is on disk when this returns.
   */
  insertCampaign(campaign: NewCampaign): CampaignInsert {
    return this.db.transaction((): CampaignInsert => {
      const held = campaign.idempotencyKey ?? null;
      if (held !== null && !this.keys.holds(campaign.clientId, held)) return { outcome: 'key-lost' };
      let creditsReserved: number | null = null;
      const needed = campaign.creditsNeeded ?? null;
      if (needed !== null) {
        const reservation = this.ledger.reserve(campaign.clientId, campaign.id, needed, campaign.createdAtMs);
        if (reservation.outcome === 'short') return reservation;
        if (reservation.outcome === 'reserved') creditsReserved = reservation.credits;
      }
      this.insertCampaignStmt.run({
        id: campaign.id, clientId: campaign.clientId, userId: campaign.userId, state: campaign.state, name: campaign.name,
        sender: campaign.sender, text: campaign.text, sendAtLocal: campaign.sendAtLocal, createAsDraft: campaign.createAsDraft ? 1 : 0,
        shouldSaveList: campaign.shouldSaveList ? 1 : 0, requestRecipientsJson: campaign.requestRecipientsJson,
        createdAtMs: campaign.createdAtMs, creditsReserved,
      });
      if (held !== null) this.keys.complete(campaign.clientId, held.key, campaign.id);
      return { outcome: 'stored', creditsReserved };
    }).immediate();
  }

  findCampaign(id: string): CampaignRow | undefined {
    return this.findCampaignStmt.get(id) as CampaignRow | undefined;
  }

  /** Campaigns still to process, oldest first: 'processing' ones were interrupted by a crash. */
  unprocessedCampaignIds(maxCampaigns: number, _nodeId?: string): string[] {
    return (this.unprocessedStmt.all(maxCampaigns) as Array<{ id: string }>).map((row) => row.id);
  }

  /** Claims a campaign for processing; undefined when it is no longer queued (e.g. already ready). */
  claimForProcessing(id: string, _nodeId?: string): CampaignToProcess | undefined {
    return this.markProcessingStmt.get(id) as CampaignToProcess | undefined;
  }

  /**
   * Deletes up to `maxRows` recipients of a campaign still in 'processing' (what an interrupted earlier
   * attempt wrote). Returns how many were deleted, or undefined when the campaign is no longer
   * 'processing' (nothing is deleted then). Bounded so one call never holds the writer for long.
   */
  deletePartialRecipients(campaignId: string, maxRows: number, _nodeId?: string): number | undefined {
    return this.db.transaction((): number | undefined => {
      if (!this.isProcessing(campaignId)) return undefined;
      return this.deleteRecipientsChunkStmt.run(campaignId, maxRows).changes;
    })();
  }

  /**
   * Appends recipients (dispatch_state 'waiting', status 'pending') to a campaign in 'processing', in
   * one transaction. Returns false when the campaign is no longer 'processing' (nothing is written).
   * The engine reads only 'ready' campaigns, so rows written here stay invisible until markReady.
   */
  appendRecipients(campaignId: string, recipients: readonly RecipientToWrite[], updatedAtMs: number, _nodeId?: string): boolean {
    // No fsync of its own (deferred-sync.ts): the rows count only once markReady's synchronous=FULL
    // commit, which makes them durable with it; a crash before leaves the campaign 'processing', and
    // processing starts it again from scratch (deletePartialRecipients).
    return commitWithoutOwnSync(this.db, () => this.db.transaction((): boolean => {
      if (!this.isProcessing(campaignId)) return false;
      const fullBatches = Math.floor(recipients.length / RECIPIENT_ROWS_PER_INSERT);
      const values: Array<string | number | null> = new Array(RECIPIENT_ROWS_PER_INSERT * RECIPIENT_COLUMNS);
      for (let batch = 0; batch < fullBatches; batch++) {
        for (let i = 0; i < RECIPIENT_ROWS_PER_INSERT; i++) {
          const r = recipients[batch * RECIPIENT_ROWS_PER_INSERT + i]!;
          const at = i * RECIPIENT_COLUMNS;
          values[at] = campaignId;
          values[at + 1] = r.msisdn;
          values[at + 2] = r.clientReference;
          values[at + 3] = 'waiting';
          values[at + 4] = 'pending';
          values[at + 5] = updatedAtMs;
          values[at + 6] = r.creditsPerPart ?? 0;
        }
        this.insertRecipientBatchStmt.run(values);
      }
      for (let i = fullBatches * RECIPIENT_ROWS_PER_INSERT; i < recipients.length; i++) {
        const r = recipients[i]!;
        this.insertRecipientStmt.run(campaignId, r.msisdn, r.clientReference, 'waiting', 'pending', updatedAtMs, r.creditsPerPart ?? 0);
      }
      return true;
    })());
  }

  /**
   * Marks a campaign in 'processing' ready once all its recipients are written (appendRecipients),
   * with its credit movements (ready.credits) in the same transaction, so they are written once
   * however often processing is redone. Returns false when it was no longer 'processing'.
   */
  markReady(ready: ReadyCampaign, _nodeId?: string): boolean {
    return this.db.transaction((): boolean => {
      const result = this.markReadyStmt.run({
        campaignId: ready.campaignId,
        textSent: ready.textSent,
        encoding: ready.encoding,
        partsPerMessage: ready.partsPerMessage,
        totalSent: ready.totalSent,
        skippedCount: ready.skippedCount,
        sendAtMs: ready.sendAtMs,
        readyAtMs: ready.readyAtMs,
      });
      if (result.changes !== 1) return false;
      this.ledger.apply(ready.credits ?? [], ready.readyAtMs);
      return true;
    })();
  }

  /**
   * Marks a campaign failed and drops any recipients an attempt wrote (a failed campaign is never
   * sent), releasing all it reserved in the same transaction.
   */
  markFailed(id: string, reason: string, _nodeId?: string): void {
    this.db.transaction((): void => {
      const result = this.markFailedStmt.run(reason, id);
      if (result.changes !== 1) return;
      this.deleteRecipientsStmt.run(id);
      const reserved = this.reservedOfStmt.get(id);
      if (reserved !== undefined && reserved.credits_reserved !== null) {
        this.ledger.apply(releaseOf(reserved.client_id, id, reserved.credits_reserved), Date.now());
      }
    })();
  }

  private isProcessing(campaignId: string): boolean {
    return (this.campaignStateStmt.get(campaignId) as { state: CampaignState } | undefined)?.state === 'processing';
  }

  /**
   * Recipients by status. A campaign of at least summaryCache.minRecipients is counted at most once
   * per summaryCache.ttlMs (see SUMMARY_CACHE_DEFAULTS); callers get a copy.
   */
  statusCounts(campaignId: string): StatusCounts {
    const nowMs = this.summaryCache.now();
    const cached = this.cachedCounts.get(campaignId);
    if (cached !== undefined && nowMs - cached.countedAtMs < this.summaryCache.ttlMs) return { ...cached.counts };
    const counts: StatusCounts = { pending: 0, delivered: 0, undelivered: 0 };
    for (const row of this.statusCountsStmt.all(campaignId) as Array<{ status: RecipientStatus; n: number }>) {
      counts[row.status] = row.n;
    }
    this.rememberCounts(campaignId, counts, nowMs);
    return { ...counts };
  }

  private rememberCounts(campaignId: string, counts: StatusCounts, nowMs: number): void {
    // Expired entries go first, so the map holds only campaigns polled in the last ttlMs.
    for (const [id, entry] of this.cachedCounts) {
      if (nowMs - entry.countedAtMs >= this.summaryCache.ttlMs) this.cachedCounts.delete(id);
    }
    if (counts.pending + counts.delivered + counts.undelivered >= this.summaryCache.minRecipients) {
      this.cachedCounts.set(campaignId, { counts, countedAtMs: nowMs });
    }
  }

  senders(clientId: number): SenderEntry[] {
    return this.sendersStmt.all(clientId) as SenderEntry[];
  }

  /** The type (0, 1, 2) of the account's sender with exactly this name, or undefined if absent. */
  senderType(clientId: number, name: string): number | undefined {
    return (this.senderTypeStmt.get(clientId, name) as { type: number } | undefined)?.type;
  }
}


