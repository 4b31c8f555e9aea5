/**
 * AdminQueries (src/store/sqlite/admin-queries.ts, a class on the seam's branch) on PostgreSQL: the reads
 * and housekeeping behind the admin CLI. Aliases are quoted: PostgreSQL folds unquoted names to
 * lower case, and the rows keep the camelCase keys the SQLite queries give.
 */
import type {
  AdminQueries, CampaignDetail, CampaignListRow, ClientListRow, MessageDetail, MessagePart, MessageReceipt, MessageWebhook, RecipientCounts,
  SenderListRow, TokenListRow, TokenOwnerRow, UserListRow,
} from '../sqlite/admin-queries.js';
import type { CampaignState, PartState, RecipientStatus } from '../entities.js';
import type { Async } from '../ports.js';
import { changes, inTransaction, row, rows, type PgPool, type PgQueryable } from './pool.js';

async function recipientCounts(db: PgQueryable, campaignId: string): Promise<RecipientCounts> {
  const counts: RecipientCounts = { pending: 0, delivered: 0, undelivered: 0 };
  for (const r of await rows<{ status: RecipientStatus; n: number }>(db,
    'SELECT status, COUNT(*) AS n FROM recipients WHERE campaign_id = $1 GROUP BY status', [campaignId])) counts[r.status] = r.n;
  return counts;
}

export class PgAdminQueries implements Async<AdminQueries> {
  constructor(private readonly pool: PgPool) {}

  tokensOfUser(userId: number): Promise<TokenListRow[]> {
    return rows<TokenListRow>(this.pool, `SELECT id, token_hint AS hint, created_at AS "createdAt", last_used_at AS "lastUsedAt",
        expires_at AS "expiresAt", revoked_at AS "revokedAt"
      FROM personal_access_tokens WHERE user_id = $1 ORDER BY id`, [userId]);
  }

  tokenById(id: number): Promise<TokenOwnerRow | undefined> {
    return row<TokenOwnerRow>(this.pool, `SELECT t.id, u.username, t.revoked_at AS "revokedAt"
      FROM personal_access_tokens t JOIN users u ON u.id = t.user_id WHERE t.id = $1`, [id]);
  }

  listUsers(clientId?: number): Promise<UserListRow[]> {
    const where = clientId === undefined ? '' : 'WHERE u.client_id = $1';
    return rows<UserListRow>(this.pool, `SELECT u.id, u.username, c.name AS client, u.is_admin AS "isAdmin", u.active, u.created_at AS "createdAt"
      FROM users u JOIN clients c ON c.id = u.client_id ${where} ORDER BY u.id`, clientId === undefined ? [] : [clientId]);
  }

  /** A new password also ends the user's refresh sessions (as on SQLite); tokens stay. */
  setUserPassword(userId: number, passwordHash: string, nowMs: number): Promise<{ refreshSessionsRevoked: number }> {
    return inTransaction(this.pool, async (client) => {
      await changes(client, 'UPDATE users SET password_hash = $1 WHERE id = $2', [passwordHash, userId]);
      const revoked = await changes(client, 'UPDATE refresh_sessions SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL', [nowMs, userId]);
      return { refreshSessionsRevoked: revoked };
    });
  }

  listClients(): Promise<ClientListRow[]> {
    return rows<ClientListRow>(this.pool, `SELECT c.id, c.name, c.active, c.webhook_url AS "webhookUrl",
        (c.webhook_secret_enc IS NOT NULL)::int AS signed,
        (SELECT COUNT(*) FROM users u WHERE u.client_id = c.id) AS users,
        (SELECT COUNT(*) FROM senders s WHERE s.client_id = c.id) AS senders,
        c.created_at AS "createdAt"
      FROM clients c ORDER BY c.id`);
  }

  listSenders(clientId?: number): Promise<SenderListRow[]> {
    const where = clientId === undefined ? '' : 'WHERE s.client_id = $1';
    return rows<SenderListRow>(this.pool, `SELECT s.id, c.name AS client, s.name, s.type, s.created_at AS "createdAt"
      FROM senders s JOIN clients c ON c.id = s.client_id ${where} ORDER BY c.name COLLATE "C", s.id`, clientId === undefined ? [] : [clientId]);
  }

  async removeSender(clientId: number, name: string): Promise<boolean> {
    return (await changes(this.pool, 'DELETE FROM senders WHERE client_id = $1 AND name = $2', [clientId, name])) === 1;
  }

  /** Newest first. */
  async listCampaigns(filter: { clientId?: number; state?: CampaignState; limit: number }): Promise<CampaignListRow[]> {
    const conditions: string[] = [];
    const params: (string | number)[] = [];
    if (filter.clientId !== undefined) (params.push(filter.clientId), conditions.push(`cp.client_id = $${params.length}`));
    if (filter.state !== undefined) (params.push(filter.state), conditions.push(`cp.state = $${params.length}`));
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    params.push(filter.limit);
    const found = await rows<Omit<CampaignListRow, 'counts'>>(this.pool, `SELECT cp.id, c.name AS client, cp.state, cp.name, cp.sender,
        cp.created_at AS "createdAt", cp.send_at AS "sendAt", cp.total_sent AS "totalSent"
      FROM campaigns cp JOIN clients c ON c.id = cp.client_id ${where} ORDER BY cp.created_at DESC, cp.id COLLATE "C" LIMIT $${params.length}`, params);
    return Promise.all(found.map(async (r) => ({ ...r, counts: await recipientCounts(this.pool, r.id) })));
  }

  async campaignDetail(id: string): Promise<CampaignDetail | undefined> {
    const found = await row<Omit<CampaignDetail, 'recipients' | 'parts' | 'firstSubmittedAt' | 'lastSubmittedAt' | 'lastFinalAt' | 'webhooks'>>(this.pool,
      `SELECT cp.id, c.name AS client, u.username, cp.state, cp.name, cp.sender, cp.encoding, cp.parts_per_message AS "partsPerMessage",
        cp.total_sent AS "totalSent", cp.skipped_count AS skipped, cp.failure_reason AS "failureReason", cp.send_at_local AS "sendAtLocal",
        cp.send_at AS "sendAt", cp.created_at AS "createdAt", cp.ready_at AS "readyAt", cp.dispatched_at AS "dispatchedAt"
      FROM campaigns cp JOIN clients c ON c.id = cp.client_id LEFT JOIN users u ON u.id = cp.user_id WHERE cp.id = $1`, [id]);
    if (found === undefined) return undefined;
    const parts: Record<PartState, number> = { queued: 0, submitting: 0, submitted: 0, delivered: 0, undelivered: 0 };
    for (const p of await rows<{ state: PartState; n: number }>(this.pool,
      'SELECT state, COUNT(*) AS n FROM message_parts WHERE campaign_id = $1 GROUP BY state', [id])) parts[p.state] = p.n;
    const times = await row<{ firstSubmittedAt: number | null; lastSubmittedAt: number | null; lastFinalAt: number | null }>(this.pool,
      `SELECT MIN(submitted_at) AS "firstSubmittedAt", MAX(submitted_at) AS "lastSubmittedAt", MAX(final_at) AS "lastFinalAt"
       FROM message_parts WHERE campaign_id = $1`, [id]);
    const webhooks = { pending: 0, delivered: 0, dead: 0 };
    for (const w of await rows<{ state: keyof typeof webhooks; n: number }>(this.pool, `SELECT o.state, COUNT(*) AS n FROM webhook_outbox o
        WHERE o.recipient_id IN (SELECT id FROM recipients WHERE campaign_id = $1) GROUP BY o.state`, [id])) webhooks[w.state] = w.n;
    return {
      ...found, recipients: await recipientCounts(this.pool, id), parts,
      firstSubmittedAt: times?.firstSubmittedAt ?? null, lastSubmittedAt: times?.lastSubmittedAt ?? null, lastFinalAt: times?.lastFinalAt ?? null,
      webhooks,
    };
  }

  /** Every recipient with this (normalised) number, newest campaign first, with parts, receipts and webhook rows. */
  async messagesTo(msisdn: string, campaignId?: string): Promise<MessageDetail[]> {
    const byCampaign = campaignId === undefined ? '' : 'AND r.campaign_id = $2';
    const recipients = await rows<Omit<MessageDetail, 'parts' | 'webhooks'>>(this.pool, `SELECT r.id AS "recipientId", r.campaign_id AS "campaignId",
        c.name AS client, r.msisdn, r.client_reference AS "clientReference", r.status, r.last_status AS "lastStatus", r.updated_at AS "updatedAt",
        cp.created_at AS "campaignCreatedAt"
      FROM recipients r JOIN campaigns cp ON cp.id = r.campaign_id JOIN clients c ON c.id = cp.client_id
      WHERE r.msisdn = $1 ${byCampaign} ORDER BY cp.created_at DESC, r.id DESC`, campaignId === undefined ? [msisdn] : [msisdn, campaignId]);
    if (recipients.length === 0) return [];
    const ids = recipients.map((r) => r.recipientId);
    const parts = await rows<Omit<MessagePart, 'receipts'> & { recipientId: number }>(this.pool, `SELECT id, recipient_id AS "recipientId",
        part_number AS "partNumber", parts_total AS "partsTotal", transport, state, message_id AS "messageId", attempts, last_status AS "lastStatus",
        last_error_code AS "lastErrorCode", submitted_at AS "submittedAt", final_at AS "finalAt"
      FROM message_parts WHERE recipient_id = ANY($1::bigint[]) ORDER BY recipient_id, part_number`, [ids]);
    const receipts = await rows<MessageReceipt & { partId: number }>(this.pool, `SELECT part_id AS "partId", status, final, error_code AS "errorCode",
        done_at AS "doneAt", received_at AS "receivedAt", raw
      FROM receipts WHERE part_id = ANY($1::bigint[]) ORDER BY received_at, id`, [parts.map((p) => p.id)]);
    const webhooks = await rows<MessageWebhook & { recipientId: number }>(this.pool, `SELECT id, recipient_id AS "recipientId", state, attempts,
        last_error AS "lastError", body, created_at AS "createdAt", delivered_at AS "deliveredAt", dead_at AS "deadAt"
      FROM webhook_outbox WHERE recipient_id = ANY($1::bigint[]) ORDER BY id`, [ids]);
    return recipients.map((r) => ({
      ...r,
      parts: parts.filter((p) => p.recipientId === r.recipientId).map(({ recipientId: _r, ...p }) => ({
        ...p, receipts: receipts.filter((x) => x.partId === p.id).map(({ partId: _p, ...x }) => x),
      })),
      webhooks: webhooks.filter((w) => w.recipientId === r.recipientId).map(({ recipientId: _r, ...w }) => w),
    }));
  }
}
