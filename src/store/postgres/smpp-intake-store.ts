/**
 * SmppIntakeStore (src/store/smpp-intake-port.ts) on PostgreSQL: a batch of submits in one
 * transaction of a fixed number of statements (each kind of row one INSERT ... SELECT FROM unnest,
 * named so each connection plans it once). The clients' client_credits rows are locked FOR UPDATE
 * (in client id order, as the ledger writer upserts them) before the reservations are decided, so
 * submits on any number of nodes reserve one after the other and never past what is available.
 * The parts' wake-up is notified in the transaction: other nodes hear it once the batch commits.
 */
import type { CreditMovement } from '../../accounts/credits.js';
import {
  CANCELLED_STATUS, partsOfRecipient, planCancel, planIntakeBatch,
  type IntakeFacts, type IntakeFactsQuery, type IntakeMessage, type IntakeRows, type IntakeStored, type IntakeSubmit, type SmppIntakeStore,
} from '../smpp-intake-port.js';
import { applyCreditMovements } from './credit-ledger.js';
import { insertParts } from './materialise-queries.js';
import { inTransaction, row, rows, type PgPool, type PgQueryable } from './pool.js';
import { notifyWake } from './wakeups.js';

const FACTS = `SELECT EXISTS (SELECT 1 FROM optouts WHERE client_id = $1 AND msisdn = $3) AS "optedOut",
    (SELECT type FROM senders WHERE client_id = $1 AND name = $2) AS "senderType",
    (SELECT parts_per_second FROM client_send_rates WHERE client_id = $1) AS "partsPerSecond"`;

const LOCK_ACCOUNTS = `SELECT client_id, unlimited, balance - reserved AS available FROM client_credits
  WHERE client_id = ANY($1::bigint[]) ORDER BY client_id FOR UPDATE`;

/** 'ready' and dispatched at once: neither the campaign processor nor materialise reads it. */
const INSERT_CAMPAIGNS = `INSERT INTO campaigns (id, client_id, user_id, state, name, sender, text, send_at_local, send_at, create_as_draft, should_save_list,
    request_recipients, text_sent, encoding, parts_per_message, total_sent, skipped_count, created_at, ready_at, dispatched_at, credits_reserved,
    smpp_account_id, smpp_submit)
  SELECT id, client_id, NULL, 'ready', name, sender, text, NULL, $11, 0, 0, NULL, text_sent, encoding, parts_per_message, 1, 0, $11, $11, $11,
    credits_reserved, smpp_account_id, smpp_submit
  FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::bigint[], $10::bigint[], $12::text[])
    AS t(id, client_id, name, sender, text, text_sent, encoding, parts_per_message, credits_reserved, smpp_account_id, smpp_submit)`;

const INSERT_RECIPIENTS = `INSERT INTO recipients (campaign_id, msisdn, client_reference, dispatch_state, status, last_status, updated_at, credits_per_part)
  SELECT campaign_id, msisdn, NULL, 'dispatched', 'pending', NULL, $3, credits_per_part
  FROM unnest($1::text[], $2::text[], $4::bigint[]) WITH ORDINALITY AS t(campaign_id, msisdn, credits_per_part, n) ORDER BY n
  RETURNING id, campaign_id`;

const MESSAGE = `SELECT c.client_id AS "clientId", c.credits_reserved AS "creditsReserved", r.id AS "recipientId", r.status AS "recipientStatus",
    r.last_status AS "recipientLastStatus"
  FROM campaigns c JOIN recipients r ON r.campaign_id = c.id WHERE c.id = $1 AND c.smpp_account_id = $2`;

const PARTS = `SELECT id, state, last_status AS "lastStatus", last_error_code AS "lastErrorCode", final_at AS "finalAt", credits
  FROM message_parts WHERE recipient_id = $1 ORDER BY part_number`;

const CANCEL_PARTS = `UPDATE message_parts SET state = 'undelivered', last_status = $1, final_at = $2, updated_at = $2
  WHERE id = ANY($3::bigint[]) AND state = 'queued'`;
const CANCEL_RECIPIENT = `UPDATE recipients SET status = 'undelivered', last_status = $1, updated_at = $2 WHERE id = $3 AND status = 'pending'`;

type MessageHead = Omit<IntakeMessage, 'parts'>;

export class PgSmppIntakeStore implements SmppIntakeStore {
  constructor(private readonly pool: PgPool) {}

  async readFacts(query: IntakeFactsQuery): Promise<IntakeFacts> {
    const found = await this.pool.query<{ optedOut: boolean; senderType: number | null; partsPerSecond: number | null }>({
      name: 'smpp-intake-facts', text: FACTS, values: [query.clientId, query.sender, query.msisdn],
    });
    const facts = found.rows[0];
    return { optedOut: facts?.optedOut === true, senderType: facts?.senderType ?? undefined, partsPerSecond: facts?.partsPerSecond ?? null };
  }

  insertSubmits(batch: readonly IntakeSubmit[], nowMs: number): Promise<IntakeStored[]> {
    if (batch.length === 0) return Promise.resolve([]);
    return inTransaction(this.pool, async (db) => {
      const clientIds = [...new Set(batch.map((s) => s.clientId))];
      const locked = await db.query<{ client_id: number; unlimited: number; available: number }>({ name: 'smpp-intake-lock-accounts', text: LOCK_ACCOUNTS, values: [clientIds] });
      const accounts = new Map<number, { unlimited: number; available: number } | undefined>(clientIds.map((id) => [id, undefined]));
      for (const account of locked.rows) accounts.set(account.client_id, { unlimited: account.unlimited, available: account.available });
      const { results, accepted, movements } = planIntakeBatch(batch, accounts, nowMs);
      if (accepted.length > 0) await this.write(db, accepted, movements, nowMs);
      return results;
    });
  }

  private async write(db: PgQueryable, accepted: readonly IntakeRows[], movements: readonly CreditMovement[], nowMs: number): Promise<void> {
    const campaigns = accepted.map((r) => r.campaign);
    const column = <T>(pick: (c: (typeof campaigns)[number]) => T): T[] => campaigns.map(pick);
    await db.query({
      name: 'smpp-intake-insert-campaigns',
      text: INSERT_CAMPAIGNS,
      values: [column((c) => c.id), column((c) => c.clientId), column((c) => c.name), column((c) => c.sender), column((c) => c.text), column((c) => c.textSent),
        column((c) => c.encoding), column((c) => c.partsPerMessage), column((c) => c.creditsReserved), column((c) => c.accountId), nowMs,
        column((c) => c.smppSubmitJson)],
    });
    const recipients = accepted.map((r) => r.recipient);
    const inserted = await db.query<{ id: number; campaign_id: string }>({
      name: 'smpp-intake-insert-recipients',
      text: INSERT_RECIPIENTS,
      values: [recipients.map((r) => r.campaignId), recipients.map((r) => r.msisdn), nowMs, recipients.map((r) => r.creditsPerPart)],
    });
    // One recipient per campaign: its campaign id names it.
    const recipientIds = new Map(inserted.rows.map((r) => [r.campaign_id, r.id]));
    await insertParts(db, accepted.flatMap((r) => partsOfRecipient(r, recipientIds.get(r.recipient.campaignId) as number)), nowMs);
    await applyCreditMovements(db, movements, nowMs);
    await notifyWake(db, 'smsgate_parts');
  }

  async messageState(accountId: number, messageId: string): Promise<IntakeMessage | undefined> {
    return readMessage(this.pool, accountId, messageId, false);
  }

  cancel(accountId: number, messageId: string, nowMs: number): Promise<'cancelled' | 'refused' | 'unknown'> {
    return inTransaction(this.pool, async (db) => {
      // The parts locked first: a claim in flight holds them until it commits, and is then read as it left them.
      const message = await readMessage(db, accountId, messageId, true);
      if (message === undefined) return 'unknown';
      const plan = planCancel(message, messageId);
      if (plan.kind === 'refuse') return 'refused';
      await db.query(CANCEL_PARTS, [CANCELLED_STATUS, nowMs, plan.partIds]);
      await db.query(CANCEL_RECIPIENT, [CANCELLED_STATUS, nowMs, plan.recipientId]);
      await applyCreditMovements(db, plan.credits, nowMs);
      return 'cancelled';
    });
  }
}

async function readMessage(db: PgQueryable, accountId: number, messageId: string, lock: boolean): Promise<IntakeMessage | undefined> {
  const head = await row<MessageHead>(db, MESSAGE, [messageId, accountId]);
  if (head === undefined) return undefined;
  const parts = await rows<IntakeMessage['parts'][number]>(db, lock ? `${PARTS} FOR UPDATE` : PARTS, [head.recipientId]);
  return { ...head, parts };
}
