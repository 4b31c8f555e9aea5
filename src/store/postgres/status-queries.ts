/**
 * StatusQueries (src/store/sqlite/status-store.ts, a class on the seam's branch) on PostgreSQL: queue
 * depths, webhook backlog per client, campaigns in progress, and the readiness write probe.
 */
import { lowCreditsChanges, type ClientCredits, type LowCreditsChange, type LowCreditsMark } from '../../accounts/low-credits.js';
import type { Async } from '../ports.js';
import type { CampaignProgress, ClientName, ClientWebhooks, QueueDueSince, QueuedParts, StatusQueries, UndeliveredGroup, WriteProbe } from '../sqlite/status-store.js';
import { changes, connectListening, inTransaction, row, rows, type PgClient, type PgPool, type PgQueryable } from './pool.js';

export class PgStatusQueries implements Async<StatusQueries> {
  constructor(private readonly pool: PgPool) {}

  /** Parts queued and submitting per named transport, one grouped count over the claim index. */
  async queuedPartsByTransport(transports: readonly string[]): Promise<QueuedParts[]> {
    const counted = await rows<{ transport: string; state: 'queued' | 'submitting'; n: number }>(this.pool,
      `SELECT transport, state, COUNT(*) AS n FROM message_parts
       WHERE transport = ANY($1::text[]) AND state IN ('queued', 'submitting') GROUP BY transport, state`, [transports]);
    return transports.map((transport) => ({
      transport,
      queued: counted.find((c) => c.transport === transport && c.state === 'queued')?.n ?? 0,
      submitting: counted.find((c) => c.transport === transport && c.state === 'submitting')?.n ?? 0,
    }));
  }

  /** As status-store.ts oldestDueByTransport: one grouped MIN over the claim index. */
  async oldestDueByTransport(transports: readonly string[], nowMs: number): Promise<QueueDueSince[]> {
    const found = await rows<{ transport: string; oldest: string | number | null }>(this.pool,
      `SELECT transport, MIN(next_attempt_at) AS oldest FROM message_parts
       WHERE transport = ANY($1::text[]) AND state = 'queued' AND next_attempt_at <= $2 GROUP BY transport`, [transports, nowMs]);
    return transports.map((transport) => {
      const oldest = found.find((f) => f.transport === transport)?.oldest;
      return { transport, oldestDueAtMs: oldest === undefined || oldest === null ? null : Number(oldest) };
    });
  }

  async pendingWebhookCount(): Promise<number> {
    return Number((await row<{ n: number | string }>(this.pool, `SELECT COUNT(*) AS n FROM webhook_outbox WHERE state = 'pending'`))?.n ?? 0);
  }

  async deadLetterCount(): Promise<number> {
    return (await row<{ n: number }>(this.pool, `SELECT COUNT(*) AS n FROM webhook_outbox WHERE state = 'dead'`))?.n ?? 0;
  }

  /** Clients with a webhook URL or any pending or dead event, by name. */
  async webhooksByClient(): Promise<ClientWebhooks[]> {
    const found = await rows<Omit<ClientWebhooks, 'hasWebhook'> & { hasWebhook: boolean }>(this.pool,
      `SELECT c.id AS "clientId", c.name AS client,
              (c.webhook_url IS NOT NULL AND c.webhook_url <> '') AS "hasWebhook",
              (SELECT COUNT(*) FROM webhook_outbox o WHERE o.client_id = c.id AND o.state = 'pending') AS pending,
              (SELECT COUNT(*) FROM webhook_outbox o WHERE o.client_id = c.id AND o.state = 'dead') AS dead
       FROM clients c ORDER BY c.name COLLATE "C"`);
    return found.filter((r) => r.hasWebhook || r.pending > 0 || r.dead > 0);
  }

  /** As status-store.ts campaignsInProgress: `sent` = recipients - not dispatched - dispatched with a part unanswered. */
  async campaignsInProgress(maxCampaigns: number): Promise<CampaignProgress[]> {
    const campaigns = await rows<Omit<CampaignProgress, 'sent' | 'delivered' | 'undelivered' | 'pending'>>(this.pool,
      `SELECT c.id, c.name, cl.name AS client, c.state, c.created_at AS "createdAtMs", COALESCE(c.total_sent, 0) AS total
       FROM campaigns c JOIN clients cl ON cl.id = c.client_id
       WHERE c.state IN ('queued', 'processing')
          OR (c.state = 'ready' AND EXISTS (SELECT 1 FROM recipients r WHERE r.campaign_id = c.id AND r.status = 'pending'))
       ORDER BY c.created_at DESC, c.id COLLATE "C" LIMIT $1`, [maxCampaigns]);
    if (campaigns.length === 0) return [];
    const ids = campaigns.map((c) => c.id);
    const unsent = new Map((await rows<{ id: string; n: number }>(this.pool,
      `SELECT campaign_id AS id, COUNT(DISTINCT recipient_id) AS n FROM message_parts
       WHERE state IN ('queued', 'submitting') AND campaign_id = ANY($1::text[]) GROUP BY campaign_id`, [ids])).map((r) => [r.id, r.n]));
    const byStatus = await rows<{ id: string; status: 'delivered' | 'undelivered' | 'pending'; n: number }>(this.pool,
      `SELECT campaign_id AS id, status, COUNT(*) AS n FROM recipients WHERE campaign_id = ANY($1::text[]) GROUP BY campaign_id, status`, [ids]);
    const waiting = new Map((await rows<{ id: string; n: number }>(this.pool,
      `SELECT campaign_id AS id, COUNT(*) AS n FROM recipients WHERE campaign_id = ANY($1::text[]) AND dispatch_state = 'waiting' GROUP BY campaign_id`,
      [ids])).map((r) => [r.id, r.n]));
    return campaigns.map((c) => {
      const counts = { delivered: 0, undelivered: 0, pending: 0 };
      for (const r of byStatus) if (r.id === c.id) counts[r.status] = r.n;
      const total = counts.delivered + counts.undelivered + counts.pending;
      return { ...c, ...counts, sent: total - (waiting.get(c.id) ?? 0) - (unsent.get(c.id) ?? 0) };
    });
  }

  /** As status-store.ts finishedCampaigns. */
  async finishedCampaigns(maxCampaigns: number): Promise<CampaignProgress[]> {
    const campaigns = await rows<Omit<CampaignProgress, 'sent' | 'delivered' | 'undelivered' | 'pending'>>(this.pool,
      `SELECT c.id, c.name, cl.name AS client, c.state, c.created_at AS "createdAtMs", COALESCE(c.total_sent, 0) AS total
       FROM campaigns c JOIN clients cl ON cl.id = c.client_id
       WHERE c.state = 'failed'
          OR (c.state = 'ready' AND NOT EXISTS (SELECT 1 FROM recipients r WHERE r.campaign_id = c.id AND r.status = 'pending'))
       ORDER BY c.created_at DESC, c.id COLLATE "C" LIMIT $1`, [maxCampaigns]);
    if (campaigns.length === 0) return [];
    const byStatus = await rows<{ id: string; status: 'delivered' | 'undelivered' | 'pending'; n: number }>(this.pool,
      `SELECT campaign_id AS id, status, COUNT(*) AS n FROM recipients WHERE campaign_id = ANY($1::text[]) GROUP BY campaign_id, status`,
      [campaigns.map((c) => c.id)]);
    return campaigns.map((c) => {
      const counts = { delivered: 0, undelivered: 0, pending: 0 };
      for (const r of byStatus) if (r.id === c.id) counts[r.status] = r.n;
      return { ...c, ...counts, sent: counts.delivered + counts.undelivered + counts.pending };
    });
  }

  /** As status-store.ts undeliveredGroups. */
  async undeliveredGroups(campaignId: string): Promise<UndeliveredGroup[]> {
    return rows<UndeliveredGroup>(this.pool,
      `SELECT r.last_status AS "lastStatus",
              EXISTS (SELECT 1 FROM message_parts p WHERE p.recipient_id = r.id AND p.state = 'undelivered' AND p.message_id IS NULL) AS rejected,
              COUNT(*) AS recipients
       FROM recipients r WHERE r.campaign_id = $1 AND r.status = 'undelivered'
       GROUP BY 1, 2`, [campaignId]);
  }

  async clientNames(): Promise<ClientName[]> {
    return rows<ClientName>(this.pool, `SELECT id, name FROM clients ORDER BY id`);
  }

  /** As status-store.ts clientCredits: one query, a client with no client_credits row unlimited. */
  async clientCredits(): Promise<ClientCredits[]> {
    return rows<ClientCredits>(this.pool,
      `SELECT c.id AS "clientId", c.name AS client, (cc.client_id IS NULL OR cc.unlimited = 1) AS unlimited,
              COALESCE(cc.balance, 0) AS balance, COALESCE(cc.reserved, 0) AS reserved,
              COALESCE(cc.balance - cc.reserved, 0) AS available, r.parts_per_second AS "partsPerSecond"
       FROM clients c LEFT JOIN client_credits cc ON cc.client_id = c.id LEFT JOIN client_send_rates r ON r.client_id = c.id
       ORDER BY c.name COLLATE "C"`);
  }

  /**
   * As status-store.ts settleLowCredits: a read without locks first; then, when a mark is to
   * change, the clients' rows locked FOR UPDATE (in client id order, as the ledger locks them),
   * decided again and written in that transaction, so of several nodes checking at once only the
   * one whose transaction changes a mark reports it.
   */
  async settleLowCredits(threshold: number, nowMs: number): Promise<LowCreditsChange[]> {
    const candidates = lowCreditsChanges(await lowCreditsMarks(this.pool, null), threshold);
    if (candidates.length === 0) return [];
    return inTransaction(this.pool, async (client) => {
      const decided = lowCreditsChanges(await lowCreditsMarks(client, candidates.map((c) => c.clientId)), threshold);
      const low = decided.filter((c) => c.low).map((c) => c.clientId);
      const back = decided.filter((c) => !c.low).map((c) => c.clientId);
      if (low.length > 0) await changes(client, 'UPDATE client_credits SET low_since = $1 WHERE client_id = ANY($2::bigint[])', [nowMs, low]);
      if (back.length > 0) await changes(client, 'UPDATE client_credits SET low_since = NULL WHERE client_id = ANY($1::bigint[])', [back]);
      return decided;
    });
  }

  /**
   * Whether the database takes writes now: a real schema write in a transaction that is rolled
   * back, with lock_timeout and statement_timeout at maxWaitMs so a stuck server or lock reads as
   * "not writable" instead of stalling the caller. A read-only standby (after a failover the node
   * still points at) fails here too.
   */
  async probeWritable(maxWaitMs = 250): Promise<WriteProbe> {
    const waitMs = Math.max(1, Math.trunc(maxWaitMs));
    let client: PgClient;
    try {
      client = await connectWithin(this.pool, waitMs);
    } catch (err) {
      return { ok: false, reason: err instanceof Error ? err.message : String(err) };
    }
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL lock_timeout = ${waitMs}`);
      await client.query(`SET LOCAL statement_timeout = ${waitMs}`);
      await client.query('CREATE TEMPORARY TABLE smsgate_ready_probe (x BIGINT)');
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: err instanceof Error ? err.message : String(err) };
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      releaseProbe(client);
    }
  }
}

/** Clients with a balance and their low marks; `lockIds`: only these, locked FOR UPDATE. */
async function lowCreditsMarks(db: PgQueryable, lockIds: readonly number[] | null): Promise<LowCreditsMark[]> {
  const select = `SELECT cc.client_id AS "clientId", c.name AS client, cc.unlimited = 1 AS unlimited,
                         cc.balance - cc.reserved AS available, cc.low_since AS "lowSince"
                  FROM client_credits cc JOIN clients c ON c.id = cc.client_id`;
  if (lockIds === null) return rows<LowCreditsMark>(db, `${select} ORDER BY cc.client_id`);
  return rows<LowCreditsMark>(db, `${select} WHERE cc.client_id = ANY($1::bigint[]) ORDER BY cc.client_id FOR UPDATE OF cc`, [lockIds]);
}

/**
 * A pooled connection within waitMs, or a rejection: an exhausted pool or a server that does not
 * answer reads as "not writable" at once. A connection that comes after the deadline goes back to
 * the pool.
 */
function connectWithin(pool: PgPool, waitMs: number): Promise<PgClient> {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(new Error(`no database connection within ${waitMs} ms`));
    }, waitMs);
    // Heard from the start: a server that ends the session between the probe's statements must not crash the process.
    connectListening(pool, ignoreLoss).then(
      (client) => {
        clearTimeout(timer);
        if (late) releaseProbe(client);
        else resolve(client);
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (!late) reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/** The probe's connection-loss listener: the probe's own statements report the failure. */
function ignoreLoss(): void {}

function releaseProbe(client: PgClient): void {
  client.off('error', ignoreLoss);
  client.release();
}
