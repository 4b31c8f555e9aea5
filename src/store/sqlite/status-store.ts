/**
 * Read-only SQL behind the admin status page, /metrics and `smsgate status`: queue
 * depths, webhook backlog per client, campaigns in progress, and the readiness write probe. Each
 * query uses an existing index (message_parts_fair_claim, message_parts_submitting, webhook_outbox_dead,
 * recipients_status).
 */
import { lowCreditsChanges, type ClientCredits, type LowCreditsChange, type LowCreditsMark } from '../../accounts/low-credits.js';
import type { DatabaseFileGuard } from './database-file-guard.js';
import type { SqliteDatabase } from './database.js';

export interface QueuedParts {
  transport: string;
  /** Parts waiting for their turn (or their retry time). */
  queued: number;
  /** Parts handed to the transport, outcome not yet written. */
  submitting: number;
}

/** How long a transport's queue has kept a part waiting: the oldest due time of its queued parts (null: none due). */
export interface QueueDueSince {
  transport: string;
  /** The earliest next_attempt_at of its queued parts that are due (<= now), ms since epoch; null when none is due. */
  oldestDueAtMs: number | null;
}

export interface ClientWebhooks {
  clientId: number;
  client: string;
  hasWebhook: boolean;
  pending: number;
  dead: number;
}

export interface CampaignProgress {
  id: string;
  name: string;
  client: string;
  state: string;
  createdAtMs: number;
  /** Accepted recipients (the summary's totalSent); 0 while still being processed. */
  total: number;
  /** Recipients every part of which the network has taken (submitted or final). */
  sent: number;
  delivered: number;
  undelivered: number;
  pending: number;
}

/**
 * Undelivered recipients of a campaign grouped by what failed them: `lastStatus` is the receipt
 * status (UNDELIV, EXPIRED...) or, for a part the network never took, the submit's code
 * (ESME_RINVDSTADR, CMS_ERROR_500...); `rejected` is true for the latter (a part undelivered with no
 * message id). The breakdown itself is one pure function (src/admin/campaign-outcomes.ts).
 */
export interface UndeliveredGroup {
  lastStatus: string | null;
  rejected: boolean;
  recipients: number;
}

export interface ClientName {
  id: number;
  name: string;
}

export type WriteProbe = { ok: true } | { ok: false; reason: string };

/**
 * The part counts of the status page, exported so test/store/live-row-index-plans.test.ts checks
 * their plans: each state literal, so SQLite reads the partial index of that state's parts.
 */
export const STATUS_PART_SQL = {
  queued: `SELECT COUNT(*) FROM message_parts WHERE transport = ? AND state = 'queued'`,
  submitting: `SELECT COUNT(*) FROM message_parts WHERE transport = ? AND state = 'submitting'`,
  /** Recipients with a part not yet answered, per campaign. */
  unsentByCampaign: `SELECT campaign_id AS id, COUNT(DISTINCT recipient_id) AS n FROM (
      SELECT campaign_id, recipient_id FROM message_parts WHERE state = 'queued'
      UNION ALL SELECT campaign_id, recipient_id FROM message_parts WHERE state = 'submitting'
    ) GROUP BY campaign_id`,
} as const;

/**
 * The status queries over one connection (the admin listener and `smsgate status` reach
 * them through `Async<StatusQueries>`; a PostgreSQL class with the same method names stands in).
 */
export class StatusQueries {
  /** `file`: the store's file guard (database-file-guard.ts); a moved file is not writable. */
  constructor(
    private readonly db: SqliteDatabase,
    private readonly file?: Pick<DatabaseFileGuard, 'check'>,
  ) {}

  /**
   * Parts queued and submitting per transport: one count per (transport, state), each a range of
   * the partial index holding only the parts in that state (message_parts_fair_claim,
   * message_parts_submitting: migrations/1766400000001-live-row-indexes.ts), so the cost is the
   * number of such parts, never a table scan. The state is literal in each statement: SQLite uses
   * a partial index only when the query's WHERE implies the index's. `transports` names the
   * transports to count.
   */
  queuedPartsByTransport(transports: readonly string[]): QueuedParts[] {
    const queued = this.db.prepare<[string]>(STATUS_PART_SQL.queued).pluck();
    const submitting = this.db.prepare<[string]>(STATUS_PART_SQL.submitting).pluck();
    return transports.map((transport) => ({
      transport,
      queued: queued.get(transport) as number,
      submitting: submitting.get(transport) as number,
    }));
  }

  /**
   * The oldest due time of each named transport's queued parts (smsgate_queue_oldest_age_seconds):
   * a part not yet claimed although due since then. Parts waiting for a later retry are not due
   * and do not count. Reads the fair-claim index's (transport, state) prefix, as the counts do.
   */
  oldestDueByTransport(transports: readonly string[], nowMs: number): QueueDueSince[] {
    const oldest = this.db.prepare<[string, number]>(`SELECT MIN(next_attempt_at) FROM message_parts WHERE transport = ? AND state = 'queued' AND next_attempt_at <= ?`).pluck();
    return transports.map((transport) => ({ transport, oldestDueAtMs: (oldest.get(transport, nowMs) as number | null) ?? null }));
  }

  /** Webhook events waiting for their first attempt or a retry (smsgate_webhook_pending). */
  pendingWebhookCount(): number {
    return this.db.prepare(`SELECT COUNT(*) FROM webhook_outbox WHERE state = 'pending'`).pluck().get() as number;
  }

  deadLetterCount(): number {
    return this.db.prepare(`SELECT COUNT(*) FROM webhook_outbox WHERE state = 'dead'`).pluck().get() as number;
  }

  /** Clients with a webhook URL or any pending or dead event, by name. */
  webhooksByClient(): ClientWebhooks[] {
    const rows = this.db
      .prepare(
        `SELECT c.id AS clientId, c.name AS client,
                (c.webhook_url IS NOT NULL AND c.webhook_url <> '') AS hasWebhook,
                (SELECT COUNT(*) FROM webhook_outbox o WHERE o.client_id = c.id AND o.state = 'pending') AS pending,
                (SELECT COUNT(*) FROM webhook_outbox o WHERE o.client_id = c.id AND o.state = 'dead') AS dead
         FROM clients c ORDER BY c.name`,
      )
      .all() as (Omit<ClientWebhooks, 'hasWebhook'> & { hasWebhook: number })[];
    return rows.filter((r) => r.hasWebhook === 1 || r.pending > 0 || r.dead > 0).map((r) => ({ ...r, hasWebhook: r.hasWebhook === 1 }));
  }

  /**
   * Campaigns still being processed, or ready with recipients still pending, newest first. The
   * counts use indexes only: recipients by status (recipients_status), recipients not yet
   * dispatched (recipients_dispatch), and one pass over the parts not yet answered for all campaigns
   * (the queued and the submitting partial indexes, each state literal so SQLite uses them). `sent` = recipients - not dispatched - dispatched with a part unanswered.
   */
  campaignsInProgress(maxCampaigns: number): CampaignProgress[] {
    const campaigns = this.db
      .prepare(
        `SELECT c.id, c.name, cl.name AS client, c.state, c.created_at AS createdAtMs, COALESCE(c.total_sent, 0) AS total
         FROM campaigns c JOIN clients cl ON cl.id = c.client_id
         WHERE c.state IN ('queued', 'processing')
            OR (c.state = 'ready' AND EXISTS (SELECT 1 FROM recipients r WHERE r.campaign_id = c.id AND r.status = 'pending'))
         ORDER BY c.created_at DESC, c.id LIMIT ?`,
      )
      .all(maxCampaigns) as Omit<CampaignProgress, 'sent' | 'delivered' | 'undelivered' | 'pending'>[];
    if (campaigns.length === 0) return [];
    const unsent = new Map(
      (this.db
        .prepare(STATUS_PART_SQL.unsentByCampaign)
        .all() as { id: string; n: number }[]).map((row) => [row.id, row.n]),
    );
    const byStatus = this.db.prepare<[string]>(`SELECT status, COUNT(*) AS n FROM recipients WHERE campaign_id = ? GROUP BY status`);
    const waiting = this.db.prepare<[string]>(`SELECT COUNT(*) FROM recipients WHERE campaign_id = ? AND dispatch_state = 'waiting'`).pluck();
    return campaigns.map((c) => {
      const counts = { delivered: 0, undelivered: 0, pending: 0 };
      for (const row of byStatus.all(c.id) as { status: keyof typeof counts; n: number }[]) counts[row.status] = row.n;
      const rows = counts.delivered + counts.undelivered + counts.pending;
      const sent = rows - (waiting.get(c.id) as number) - (unsent.get(c.id) ?? 0);
      return { ...c, ...counts, sent };
    });
  }

  /**
   * Campaigns that are over, newest first: failed, or ready with no recipient pending. Same shape
   * as campaignsInProgress (`sent` counts recipients all of whose parts the network answered).
   */
  finishedCampaigns(maxCampaigns: number): CampaignProgress[] {
    const campaigns = this.db
      .prepare(
        `SELECT c.id, c.name, cl.name AS client, c.state, c.created_at AS createdAtMs, COALESCE(c.total_sent, 0) AS total
         FROM campaigns c JOIN clients cl ON cl.id = c.client_id
         WHERE c.state = 'failed'
            OR (c.state = 'ready' AND NOT EXISTS (SELECT 1 FROM recipients r WHERE r.campaign_id = c.id AND r.status = 'pending'))
         ORDER BY c.created_at DESC, c.id LIMIT ?`,
      )
      .all(maxCampaigns) as Omit<CampaignProgress, 'sent' | 'delivered' | 'undelivered' | 'pending'>[];
    const byStatus = this.db.prepare<[string]>(`SELECT status, COUNT(*) AS n FROM recipients WHERE campaign_id = ? GROUP BY status`);
    return campaigns.map((c) => {
      const counts = { delivered: 0, undelivered: 0, pending: 0 };
      for (const row of byStatus.all(c.id) as { status: keyof typeof counts; n: number }[]) counts[row.status] = row.n;
      return { ...c, ...counts, sent: counts.delivered + counts.undelivered + counts.pending };
    });
  }

  /**
   * The campaign's undelivered recipients by (lastStatus, rejected), in no order: recipients_status,
   * then each one's parts by its unique key (recipient_id, part_number).
   */
  undeliveredGroups(campaignId: string): UndeliveredGroup[] {
    const rows = this.db
      .prepare<[string]>(
        `SELECT r.last_status AS lastStatus,
                EXISTS (SELECT 1 FROM message_parts p WHERE p.recipient_id = r.id AND p.state = 'undelivered' AND p.message_id IS NULL) AS rejected,
                COUNT(*) AS recipients
         FROM recipients r WHERE r.campaign_id = ? AND r.status = 'undelivered'
         GROUP BY 1, 2`,
      )
      .all(campaignId) as { lastStatus: string | null; rejected: number; recipients: number }[];
    return rows.map((r) => ({ ...r, rejected: r.rejected === 1 }));
  }

  /** Every client's id and name, so pages and logs name clients instead of numbering them. */
  clientNames(): ClientName[] {
    return this.db.prepare(`SELECT id, name FROM clients ORDER BY id`).all() as ClientName[];
  }

  /**
   * Every client's credit account and send rate, by name, in one query: a client with no
   * client_credits row is unlimited (balance, reserved and available 0), one with no
   * client_send_rates row has no rate (null).
   */
  clientCredits(): ClientCredits[] {
    const rows = this.db
      .prepare(
        `SELECT c.id AS clientId, c.name AS client, (cc.client_id IS NULL OR cc.unlimited = 1) AS unlimited,
                COALESCE(cc.balance, 0) AS balance, COALESCE(cc.reserved, 0) AS reserved,
                COALESCE(cc.balance - cc.reserved, 0) AS available, r.parts_per_second AS partsPerSecond
         FROM clients c LEFT JOIN client_credits cc ON cc.client_id = c.id LEFT JOIN client_send_rates r ON r.client_id = c.id
         ORDER BY c.name`,
      )
      .all() as (Omit<ClientCredits, 'unlimited'> & { unlimited: number })[];
    return rows.map((r) => ({ ...r, unlimited: r.unlimited === 1 }));
  }

  /**
   * Moves each client's low mark (client_credits.low_since) to what it is now against `threshold`
   * (src/accounts/low-credits.ts decides) and returns the clients whose mark this call changed.
   * A read first, so a check that finds nothing to change takes no write lock; then the changes
   * are decided again and written in one IMMEDIATE transaction, so a mark changes once per crossing.
   */
  settleLowCredits(threshold: number, nowMs: number): LowCreditsChange[] {
    if (lowCreditsChanges(this.lowCreditsMarks(), threshold).length === 0) return [];
    const clear = this.db.prepare<[number]>('UPDATE client_credits SET low_since = NULL WHERE client_id = ?');
    const mark = this.db.prepare<[number, number]>('UPDATE client_credits SET low_since = ? WHERE client_id = ?');
    return this.db
      .transaction(() => {
        const changes = lowCreditsChanges(this.lowCreditsMarks(), threshold);
        for (const change of changes) {
          if (change.low) mark.run(nowMs, change.clientId);
          else clear.run(change.clientId);
        }
        return changes;
      })
      .immediate();
  }

  private lowCreditsMarks(): LowCreditsMark[] {
    const rows = this.db
      .prepare(
        `SELECT cc.client_id AS clientId, c.name AS client, cc.unlimited, cc.balance - cc.reserved AS available, cc.low_since AS lowSince
         FROM client_credits cc JOIN clients c ON c.id = cc.client_id ORDER BY cc.client_id`,
      )
      .all() as (Omit<LowCreditsMark, 'unlimited'> & { unlimited: number })[];
    return rows.map((r) => ({ ...r, unlimited: r.unlimited === 1 }));
  }

  /**
   * Whether the database takes writes now: BEGIN IMMEDIATE (the write lock), a real schema write,
   * then ROLLBACK, so nothing changes. Waits at most maxWaitMs for another writer (busy_timeout is
   * restored after), so a held lock reads as "not writable" instead of stalling the caller.
   */
  probeWritable(maxWaitMs = 250): WriteProbe {
    // The open file may no longer be the database's (deleted or replaced): the probe would succeed into it.
    const moved = this.file?.check();
    if (moved !== undefined) return { ok: false, reason: moved.message };
    if (this.db.inTransaction) return { ok: true };
    const previousTimeout = this.db.pragma('busy_timeout', { simple: true }) as number;
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(maxWaitMs))}`);
    try {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        this.db.exec('CREATE TABLE smsgate_ready_probe (x INTEGER)');
      } finally {
        this.db.exec('ROLLBACK');
      }
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: err instanceof Error ? err.message : String(err) };
    } finally {
      this.db.pragma(`busy_timeout = ${previousTimeout}`);
    }
  }
}
