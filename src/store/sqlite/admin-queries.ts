/**
 * The read and housekeeping SQL behind the admin CLI (`token list`, `user|client|sender list`,
 * `campaign list|show`, `message show`, ...). Run once per command, so statements are prepared per
 * call. Lookups by msisdn, and parts, receipts and webhook rows of a recipient, have no index of
 * their own (the hot write paths would pay for one): each scans its table once, which is fine for
 * an operator's question and never runs inside `serve`.
 */
import type { CampaignState, PartState, RecipientStatus } from '../entities.js';
import type { SqliteDatabase } from './database.js';

export interface TokenListRow {
  id: number; hint: string; createdAt: number; lastUsedAt: number | null; expiresAt: number | null; revokedAt: number | null;
}

export interface TokenOwnerRow { id: number; username: string; revokedAt: number | null }

export interface UserListRow { id: number; username: string; client: string; isAdmin: number; active: number; createdAt: number }

export interface ClientListRow {
  id: number; name: string; active: number; webhookUrl: string | null; signed: number; users: number; senders: number; createdAt: number;
}

export interface SenderListRow { id: number; client: string; name: string; type: number; createdAt: number }

export type RecipientCounts = Record<RecipientStatus, number>;

export interface CampaignListRow {
  id: string; client: string; state: CampaignState; name: string; sender: string; createdAt: number; sendAt: number | null;
  totalSent: number | null; counts: RecipientCounts;
}

export interface CampaignDetail {
  id: string; client: string; username: string | null; state: CampaignState; name: string; sender: string;
  encoding: string | null; partsPerMessage: number | null; totalSent: number | null; skipped: number | null; failureReason: string | null;
  sendAtLocal: string | null; sendAt: number | null; createdAt: number; readyAt: number | null; dispatchedAt: number | null;
  recipients: RecipientCounts;
  parts: Record<PartState, number>;
  firstSubmittedAt: number | null; lastSubmittedAt: number | null; lastFinalAt: number | null;
  webhooks: { pending: number; delivered: number; dead: number };
}

export interface MessageReceipt { status: string; final: number; errorCode: string | null; doneAt: string | null; receivedAt: number; raw: string }

export interface MessagePart {
  id: number; partNumber: number; partsTotal: number; transport: string | null; state: PartState; messageId: string | null;
  attempts: number; lastStatus: string | null; lastErrorCode: string | null; submittedAt: number | null; finalAt: number | null;
  receipts: MessageReceipt[];
}

export interface MessageWebhook {
  id: number; state: 'pending' | 'delivered' | 'dead'; attempts: number; lastError: string | null; body: string;
  createdAt: number; deliveredAt: number | null; deadAt: number | null;
}

export interface MessageDetail {
  recipientId: number; campaignId: string; client: string; msisdn: string; clientReference: string | null; status: RecipientStatus;
  lastStatus: string | null; updatedAt: number | null; campaignCreatedAt: number; parts: MessagePart[]; webhooks: MessageWebhook[];
}

/**
 * The queries above as one object per connection (the admin CLI reaches them through
 * `Async<AdminQueries>`, so a PostgreSQL class with the same method names can stand in).
 */
export class AdminQueries {
  constructor(private readonly db: SqliteDatabase) {}

  tokensOfUser(userId: number): TokenListRow[] {
    return this.db.prepare<[number], TokenListRow>(`SELECT id, token_hint AS hint, created_at AS createdAt, last_used_at AS lastUsedAt,
        expires_at AS expiresAt, revoked_at AS revokedAt
      FROM personal_access_tokens WHERE user_id = ? ORDER BY id`).all(userId);
  }

  tokenById(id: number): TokenOwnerRow | undefined {
    return this.db.prepare<[number], TokenOwnerRow>(`SELECT t.id, u.username, t.revoked_at AS revokedAt
      FROM personal_access_tokens t JOIN users u ON u.id = t.user_id WHERE t.id = ?`).get(id);
  }

  listUsers(clientId?: number): UserListRow[] {
    const where = clientId === undefined ? '' : 'WHERE u.client_id = ?';
    return this.db.prepare<number[], UserListRow>(`SELECT u.id, u.username, c.name AS client, u.is_admin AS isAdmin, u.active, u.created_at AS createdAt
      FROM users u JOIN clients c ON c.id = u.client_id ${where} ORDER BY u.id`).all(...(clientId === undefined ? [] : [clientId]));
  }

  /**
   * A new password also ends the user's refresh sessions, so a session started with the old password
   * (perhaps by whoever made the change necessary) cannot go on; personal access tokens are separate
   * credentials and stay.
   */
  setUserPassword(userId: number, passwordHash: string, nowMs: number): { refreshSessionsRevoked: number } {
    return this.db.transaction(() => {
      this.db.prepare<[string, number]>('UPDATE users SET password_hash = ? WHERE id = ?').run(passwordHash, userId);
      const revoked = this.db.prepare<[number, number]>('UPDATE refresh_sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL').run(nowMs, userId);
      return { refreshSessionsRevoked: revoked.changes };
    })();
  }

  listClients(): ClientListRow[] {
    return this.db.prepare<[], ClientListRow>(`SELECT c.id, c.name, c.active, c.webhook_url AS webhookUrl,
        (c.webhook_secret_enc IS NOT NULL) AS signed,
        (SELECT COUNT(*) FROM users u WHERE u.client_id = c.id) AS users,
        (SELECT COUNT(*) FROM senders s WHERE s.client_id = c.id) AS senders,
        c.created_at AS createdAt
      FROM clients c ORDER BY c.id`).all();
  }

  listSenders(clientId?: number): SenderListRow[] {
    const where = clientId === undefined ? '' : 'WHERE s.client_id = ?';
    return this.db.prepare<number[], SenderListRow>(`SELECT s.id, c.name AS client, s.name, s.type, s.created_at AS createdAt
      FROM senders s JOIN clients c ON c.id = s.client_id ${where} ORDER BY c.name, s.id`).all(...(clientId === undefined ? [] : [clientId]));
  }

  /** True when the sender was on the client's list (and is now removed). */
  removeSender(clientId: number, name: string): boolean {
    return this.db.prepare<[number, string]>('DELETE FROM senders WHERE client_id = ? AND name = ?').run(clientId, name).changes === 1;
  }

  private recipientCounts(campaignId: string): RecipientCounts {
    const counts: RecipientCounts = { pending: 0, delivered: 0, undelivered: 0 };
    // recipients_status (campaign_id, status) answers this from the index.
    const rows = this.db.prepare<[string], { status: RecipientStatus; n: number }>('SELECT status, COUNT(*) AS n FROM recipients WHERE campaign_id = ? GROUP BY status').all(campaignId);
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }

  /** Newest first. */
  listCampaigns(filter: { clientId?: number; state?: CampaignState; limit: number }): CampaignListRow[] {
    const conditions: string[] = [];
    const params: (string | number)[] = [];
    if (filter.clientId !== undefined) (conditions.push('cp.client_id = ?'), params.push(filter.clientId));
    if (filter.state !== undefined) (conditions.push('cp.state = ?'), params.push(filter.state));
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const rows = this.db.prepare<(string | number)[], Omit<CampaignListRow, 'counts'>>(`SELECT cp.id, c.name AS client, cp.state, cp.name, cp.sender,
        cp.created_at AS createdAt, cp.send_at AS sendAt, cp.total_sent AS totalSent
      FROM campaigns cp JOIN clients c ON c.id = cp.client_id ${where} ORDER BY cp.created_at DESC, cp.id LIMIT ?`).all(...params, filter.limit);
    return rows.map((row) => ({ ...row, counts: this.recipientCounts(row.id) }));
  }

  campaignDetail(id: string): CampaignDetail | undefined {
    const row = this.db.prepare<[string], Omit<CampaignDetail, 'recipients' | 'parts' | 'firstSubmittedAt' | 'lastSubmittedAt' | 'lastFinalAt' | 'webhooks'>>(
      `SELECT cp.id, c.name AS client, u.username, cp.state, cp.name, cp.sender, cp.encoding, cp.parts_per_message AS partsPerMessage,
        cp.total_sent AS totalSent, cp.skipped_count AS skipped, cp.failure_reason AS failureReason, cp.send_at_local AS sendAtLocal,
        cp.send_at AS sendAt, cp.created_at AS createdAt, cp.ready_at AS readyAt, cp.dispatched_at AS dispatchedAt
      FROM campaigns cp JOIN clients c ON c.id = cp.client_id LEFT JOIN users u ON u.id = cp.user_id WHERE cp.id = ?`).get(id);
    if (row === undefined) return undefined;
    const parts: Record<PartState, number> = { queued: 0, submitting: 0, submitted: 0, delivered: 0, undelivered: 0 };
    for (const p of this.db.prepare<[string], { state: PartState; n: number }>('SELECT state, COUNT(*) AS n FROM message_parts WHERE campaign_id = ? GROUP BY state').all(id)) {
      parts[p.state] = p.n;
    }
    const times = this.db.prepare<[string], { firstSubmittedAt: number | null; lastSubmittedAt: number | null; lastFinalAt: number | null }>(
      'SELECT MIN(submitted_at) AS firstSubmittedAt, MAX(submitted_at) AS lastSubmittedAt, MAX(final_at) AS lastFinalAt FROM message_parts WHERE campaign_id = ?').get(id);
    const webhooks = { pending: 0, delivered: 0, dead: 0 };
    for (const w of this.db.prepare<[string], { state: keyof typeof webhooks; n: number }>(`SELECT o.state, COUNT(*) AS n FROM webhook_outbox o
        WHERE o.recipient_id IN (SELECT id FROM recipients WHERE campaign_id = ?) GROUP BY o.state`).all(id)) {
      webhooks[w.state] = w.n;
    }
    return {
      ...row, recipients: this.recipientCounts(id), parts,
      firstSubmittedAt: times?.firstSubmittedAt ?? null, lastSubmittedAt: times?.lastSubmittedAt ?? null, lastFinalAt: times?.lastFinalAt ?? null,
      webhooks,
    };
  }

  /** Every recipient with this (normalised) number, newest campaign first, with parts, receipts and webhook rows. */
  messagesTo(msisdn: string, campaignId?: string): MessageDetail[] {
    const byCampaign = campaignId === undefined ? '' : 'AND r.campaign_id = ?';
    const recipients = this.db.prepare<string[], Omit<MessageDetail, 'parts' | 'webhooks'>>(`SELECT r.id AS recipientId, r.campaign_id AS campaignId,
        c.name AS client, r.msisdn, r.client_reference AS clientReference, r.status, r.last_status AS lastStatus, r.updated_at AS updatedAt,
        cp.created_at AS campaignCreatedAt
      FROM recipients r JOIN campaigns cp ON cp.id = r.campaign_id JOIN clients c ON c.id = cp.client_id
      WHERE r.msisdn = ? ${byCampaign} ORDER BY cp.created_at DESC, r.id DESC`).all(...(campaignId === undefined ? [msisdn] : [msisdn, campaignId]));
    if (recipients.length === 0) return [];
    const ids = JSON.stringify(recipients.map((r) => r.recipientId));
    const parts = this.db.prepare<[string], Omit<MessagePart, 'receipts'> & { recipientId: number }>(`SELECT id, recipient_id AS recipientId,
        part_number AS partNumber, parts_total AS partsTotal, transport, state, message_id AS messageId, attempts, last_status AS lastStatus,
        last_error_code AS lastErrorCode, submitted_at AS submittedAt, final_at AS finalAt
      FROM message_parts WHERE recipient_id IN (SELECT value FROM json_each(?)) ORDER BY recipient_id, part_number`).all(ids);
    const receipts = this.db.prepare<[string], MessageReceipt & { partId: number }>(`SELECT part_id AS partId, status, final, error_code AS errorCode,
        done_at AS doneAt, received_at AS receivedAt, raw
      FROM receipts WHERE part_id IN (SELECT value FROM json_each(?)) ORDER BY received_at, id`).all(JSON.stringify(parts.map((p) => p.id)));
    const webhooks = this.db.prepare<[string], MessageWebhook & { recipientId: number }>(`SELECT id, recipient_id AS recipientId, state, attempts,
        last_error AS lastError, body, created_at AS createdAt, delivered_at AS deliveredAt, dead_at AS deadAt
      FROM webhook_outbox WHERE recipient_id IN (SELECT value FROM json_each(?)) ORDER BY id`).all(ids);
    return recipients.map((r) => ({
      ...r,
      parts: parts.filter((p) => p.recipientId === r.recipientId).map(({ recipientId: _r, ...p }) => ({
        ...p, receipts: receipts.filter((x) => x.partId === p.id).map(({ partId: _p, ...x }) => x),
      })),
      webhooks: webhooks.filter((w) => w.recipientId === r.recipientId).map(({ recipientId: _r, ...w }) => w),
    }));
  }
}
