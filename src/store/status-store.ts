/**
 * Read-only SQL behind the admin status page, /metrics and `smsgate status` (issue 13): queue
 * depths, webhook backlog per client, campaigns in progress, and the readiness write probe. Each
 * query uses an existing index (message_parts_claim, webhook_outbox_dead, recipients_status).
 */
import type { SqliteDatabase } from './database.js';

export interface QueuedParts {
  transport: string;
  /** Parts waiting for their turn (or their retry time). */
  queued: number;
  /** Parts handed to the transport, outcome not yet written. */
  submitting: number;
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

export function queuedPartsByTransport(db: SqliteDatabase): QueuedParts[] {
  const rows = db
    .prepare(
      `SELECT transport, state, COUNT(*) AS n FROM message_parts
       WHERE state IN ('queued', 'submitting') AND transport IS NOT NULL GROUP BY transport, state`,
    )
    .all() as { transport: string; state: 'queued' | 'submitting'; n: number }[];
  const byTransport = new Map<string, QueuedParts>();
  for (const row of rows) {
    const entry = byTransport.get(row.transport) ?? { transport: row.transport, queued: 0, submitting: 0 };
    entry[row.state] = row.n;
    byTransport.set(row.transport, entry);
  }
  return [...byTransport.values()];
}

export function deadLetterCount(db: SqliteDatabase): number {
  return db.prepare(`SELECT COUNT(*) FROM webhook_outbox WHERE state = 'dead'`).pluck().get() as number;
}

/** Clients with a webhook URL or any pending or dead event, by name. */
export function webhooksByClient(db: SqliteDatabase): ClientWebhooks[] {
  const rows = db
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
 * Campaigns still being processed, or ready with recipients still pending, newest first. `sent`
 * walks the campaign's recipients once (recipients_dispatch, then each recipient's parts).
 */
export function campaignsInProgress(db: SqliteDatabase, maxCampaigns: number): CampaignProgress[] {
  const campaigns = db
    .prepare(
      `SELECT c.id, c.name, cl.name AS client, c.state, c.created_at AS createdAtMs, COALESCE(c.total_sent, 0) AS total
       FROM campaigns c JOIN clients cl ON cl.id = c.client_id
       WHERE c.state IN ('queued', 'processing')
          OR (c.state = 'ready' AND EXISTS (SELECT 1 FROM recipients r WHERE r.campaign_id = c.id AND r.status = 'pending'))
       ORDER BY c.created_at DESC, c.id LIMIT ?`,
    )
    .all(maxCampaigns) as Omit<CampaignProgress, 'sent' | 'delivered' | 'undelivered' | 'pending'>[];
  const counts = db.prepare(
    `SELECT COALESCE(SUM(r.status = 'delivered'), 0) AS delivered,
            COALESCE(SUM(r.status = 'undelivered'), 0) AS undelivered,
            COALESCE(SUM(r.status = 'pending'), 0) AS pending,
            COALESCE(SUM(r.dispatch_state = 'dispatched' AND NOT EXISTS (
              SELECT 1 FROM message_parts p WHERE p.recipient_id = r.id AND p.state IN ('queued', 'submitting'))), 0) AS sent
     FROM recipients r WHERE r.campaign_id = ?`,
  );
  return campaigns.map((c) => ({ ...c, ...(counts.get(c.id) as { sent: number; delivered: number; undelivered: number; pending: number }) }));
}

export type WriteProbe = { ok: true } | { ok: false; reason: string };

/**
 * Whether the database takes writes now: BEGIN IMMEDIATE (the write lock), a real schema write,
 * then ROLLBACK, so nothing changes. Waits at most maxWaitMs for another writer (busy_timeout is
 * restored after), so a held lock reads as "not writable" instead of stalling the caller.
 */
export function probeWritable(db: SqliteDatabase, maxWaitMs = 250): WriteProbe {
  if (db.inTransaction) return { ok: true };
  const previousTimeout = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(maxWaitMs))}`);
  try {
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec('CREATE TABLE smsgate_ready_probe (x INTEGER)');
    } finally {
      db.exec('ROLLBACK');
    }
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  } finally {
    db.pragma(`busy_timeout = ${previousTimeout}`);
  }
}
