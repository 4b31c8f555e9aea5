/**
 * SmppIntakeStore (src/store/smpp-intake-port.ts) on SQLite: prepared statements, a batch of
 * submits in one IMMEDIATE transaction (the write lock taken at BEGIN, so the credits read and the
 * reservations written from it are one unit against every other writer of the file), multi-row
 * INSERTs for the campaigns and parts as materialise writes parts. With synchronous=FULL the batch
 * is on disk when insertSubmits returns.
 */
import type { Statement } from 'better-sqlite3';
import type { CreditMovement } from '../../accounts/credits.js';
import {
  CANCELLED_STATUS, partsOfRecipient, planCancel, planIntakeBatch,
  type IntakeCampaignRow, type IntakeFacts, type IntakeRows, type IntakeFactsQuery, type IntakeMessage, type IntakeStored, type IntakeSubmit,
} from '../smpp-intake-port.js';
import { SqliteCreditLedger } from './credit-ledger.js';
import type { SqliteDatabase } from './database.js';
import { MultiRowInsert } from './multi-row-insert.js';
import { SqlitePartInserts } from './part-inserts.js';

export const SMPP_INTAKE_SQL = {
  /** The three facts by primary key or index, in one statement. */
  facts: `SELECT EXISTS (SELECT 1 FROM optouts WHERE client_id = @client AND msisdn = @msisdn) AS optedOut,
      (SELECT type FROM senders WHERE client_id = @client AND name = @sender) AS senderType,
      (SELECT parts_per_second FROM client_send_rates WHERE client_id = @client) AS partsPerSecond`,
  account: 'SELECT unlimited, balance - reserved AS available FROM client_credits WHERE client_id = ?',
  /** 'ready' and dispatched at once: neither the campaign processor nor materialise reads it. */
  insertCampaigns: `INSERT INTO campaigns (id, client_id, user_id, state, name, sender, text, send_at_local, send_at, create_as_draft, should_save_list,
      request_recipients, text_sent, encoding, parts_per_message, total_sent, skipped_count, created_at, ready_at, dispatched_at, credits_reserved,
      smpp_account_id, smpp_submit) VALUES`,
  campaignTuple: `(?, ?, NULL, 'ready', ?, ?, ?, NULL, ?, 0, 0, NULL, ?, ?, ?, 1, 0, ?, ?, ?, ?, ?, ?)`,
  /** A submit's one recipient, many a statement; RETURNING names each id by its campaign (one recipient a campaign). */
  insertRecipients: `INSERT INTO recipients (campaign_id, msisdn, client_reference, dispatch_state, status, last_status, updated_at, credits_per_part) VALUES`,
  recipientTuple: `(?, ?, NULL, 'dispatched', 'pending', NULL, ?, ?)`,
  message: `SELECT c.client_id AS clientId, c.credits_reserved AS creditsReserved, r.id AS recipientId, r.status AS recipientStatus,
      r.last_status AS recipientLastStatus
    FROM campaigns c JOIN recipients r ON r.campaign_id = c.id WHERE c.id = ? AND c.smpp_account_id = ?`,
  parts: `SELECT id, state, last_status AS lastStatus, last_error_code AS lastErrorCode, final_at AS finalAt, credits
    FROM message_parts WHERE recipient_id = ? ORDER BY part_number`,
  cancelParts: `UPDATE message_parts SET state = 'undelivered', last_status = @status, final_at = @now, updated_at = @now
    WHERE id IN (SELECT value FROM json_each(@ids)) AND state = 'queued'`,
  cancelRecipient: `UPDATE recipients SET status = 'undelivered', last_status = @status, updated_at = @now WHERE id = @id AND status = 'pending'`,
} as const;

type MessageHead = Omit<IntakeMessage, 'parts'>;

export class SqliteSmppIntakeStore {
  private readonly ledger: SqliteCreditLedger;
  private readonly parts: SqlitePartInserts;
  private readonly campaigns: MultiRowInsert<IntakeCampaignRow>;
  private readonly recipients: MultiRowInsert<{ recipient: IntakeRows['recipient']; nowMs: number }>;
  private readonly s: {
    facts: Statement<[{ client: number; sender: string; msisdn: string }], { optedOut: number; senderType: number | null; partsPerSecond: number | null }>;
    account: Statement<[number], { unlimited: number; available: number }>;
    message: Statement<[string, number], MessageHead>;
    parts: Statement<[number], IntakeMessage['parts'][number]>;
    cancelParts: Statement<[{ status: string; now: number; ids: string }]>;
    cancelRecipient: Statement<[{ status: string; now: number; id: number }]>;
  };

  constructor(private readonly db: SqliteDatabase) {
    this.ledger = new SqliteCreditLedger(db);
    this.parts = new SqlitePartInserts(db);
    this.campaigns = new MultiRowInsert(db, SMPP_INTAKE_SQL.insertCampaigns, SMPP_INTAKE_SQL.campaignTuple, (c) => [
      c.id, c.clientId, c.name, c.sender, c.text, c.createdAtMs, c.textSent, c.encoding, c.partsPerMessage, c.createdAtMs, c.createdAtMs, c.createdAtMs,
      c.creditsReserved, c.accountId, c.smppSubmitJson,
    ]);
    this.recipients = new MultiRowInsert(db, SMPP_INTAKE_SQL.insertRecipients, SMPP_INTAKE_SQL.recipientTuple, ({ recipient: r, nowMs }) => [
      r.campaignId, r.msisdn, nowMs, r.creditsPerPart,
    ], 'RETURNING id, campaign_id');
    this.s = {
      facts: db.prepare(SMPP_INTAKE_SQL.facts),
      account: db.prepare(SMPP_INTAKE_SQL.account),
      message: db.prepare(SMPP_INTAKE_SQL.message),
      parts: db.prepare(SMPP_INTAKE_SQL.parts),
      cancelParts: db.prepare(SMPP_INTAKE_SQL.cancelParts),
      cancelRecipient: db.prepare(SMPP_INTAKE_SQL.cancelRecipient),
    };
  }

  readFacts(query: IntakeFactsQuery): IntakeFacts {
    const found = this.s.facts.get({ client: query.clientId, sender: query.sender, msisdn: query.msisdn });
    return { optedOut: found?.optedOut === 1, senderType: found?.senderType ?? undefined, partsPerSecond: found?.partsPerSecond ?? null };
  }

  insertSubmits(batch: readonly IntakeSubmit[], nowMs: number): IntakeStored[] {
    if (batch.length === 0) return [];
    return this.db.transaction(() => {
      const accounts = new Map<number, { unlimited: number; available: number } | undefined>();
      for (const submit of batch) if (!accounts.has(submit.clientId)) accounts.set(submit.clientId, this.s.account.get(submit.clientId));
      const { results, accepted, movements } = planIntakeBatch(batch, accounts, nowMs);
      // Campaigns first: recipients reference them.
      this.campaigns.run(accepted.map((rows) => rows.campaign));
      const recipientIds = new Map(
        this.recipients.runReturning<{ id: number; campaign_id: string }>(accepted.map((rows) => ({ recipient: rows.recipient, nowMs })))
          .map((r) => [r.campaign_id, r.id]),
      );
      const parts = accepted.flatMap((rows) => {
        return partsOfRecipient(rows, recipientIds.get(rows.recipient.campaignId)!);
      });
      this.parts.insert(parts, nowMs);
      this.ledger.apply(movements, nowMs);
      return results;
    }).immediate();
  }

  messageState(accountId: number, messageId: string): IntakeMessage | undefined {
    const head = this.s.message.get(messageId, accountId);
    if (head === undefined) return undefined;
    return { ...head, parts: this.s.parts.all(head.recipientId) };
  }

  cancel(accountId: number, messageId: string, nowMs: number): 'cancelled' | 'refused' | 'unknown' {
    return this.db.transaction(() => {
      const message = this.messageState(accountId, messageId);
      if (message === undefined) return 'unknown';
      const plan = planCancel(message, messageId);
      if (plan.kind === 'refuse') return 'refused';
      this.s.cancelParts.run({ status: CANCELLED_STATUS, now: nowMs, ids: JSON.stringify(plan.partIds) });
      this.s.cancelRecipient.run({ status: CANCELLED_STATUS, now: nowMs, id: plan.recipientId });
      this.ledger.apply(plan.credits, nowMs);
      return 'cancelled';
    }).immediate();
  }
}
