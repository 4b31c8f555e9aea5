/**
 * The store side of materialising on PostgreSQL (MaterialiseStepStore<'async'> in
 * src/engine/steps/materialise.ts), on one connection inside the caller's transaction. Set-based:
 * a pass is a fixed number of statements however many recipients it holds, each kind of write one
 * statement over arrays (INSERT ... SELECT FROM unnest, UPDATE ... FROM unnest), named so each
 * connection parses and plans them once.
 */
import { insertOutboxRows } from './webhook-store.js';
import type { DeliveryReceiptEvent, ReadyCampaign, DueRecipient, MaterialiseWrite, MaterialiseWritten, RecipientShare } from '../dispatch-steps.js';
import type { NewPart } from '../dispatch-steps.js';
import { applyCreditMovements } from './credit-ledger.js';
import type { PgClient, PgQueryable } from './pool.js';

/** As readyCampaigns on SQLite (sqlite/materialise-queries.ts): $1 now, $2 limit, $3 cap. */
const READY_CAMPAIGNS = `SELECT c.id, c.client_id, c.sender, c.text, c.text_sent, c.smpp_submit, c.send_at,
    CASE WHEN COALESCE(c.send_at, 0) <= $1::bigint
      THEN (SELECT COUNT(*) FROM (SELECT 1 FROM recipients r WHERE r.campaign_id = c.id AND r.dispatch_state = 'waiting' LIMIT $3::int) w)::int
      ELSE 0 END AS waiting
  FROM campaigns c
  WHERE c.state = 'ready' AND c.dispatched_at IS NULL
  ORDER BY COALESCE(c.send_at, 0), c.created_at LIMIT $2::int`;

/** Each share's oldest waiting recipients, locked SKIP LOCKED: another node materialising them at once passes them over. */
const TAKE_RECIPIENTS = `SELECT r.id, r.campaign_id, r.msisdn, r.status, r.last_status, r.client_reference, c.client_id, cl.name AS client_name, c.sender, cl.webhook_url,
    r.credits_per_part
  FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS s(campaign_id, take, n)
  CROSS JOIN LATERAL (
    SELECT id FROM recipients WHERE campaign_id = s.campaign_id AND dispatch_state = 'waiting' ORDER BY id LIMIT s.take
    FOR UPDATE SKIP LOCKED
  ) picked
  JOIN recipients r ON r.id = picked.id
  JOIN campaigns c ON c.id = r.campaign_id
  JOIN clients cl ON cl.id = c.client_id
  ORDER BY s.n, r.id`;

const INSERT_PARTS = `INSERT INTO message_parts (recipient_id, campaign_id, part_number, parts_total, concat_reference, transport, state,
    last_status, next_attempt_at, final_at, updated_at, credits)
  SELECT recipient_id, campaign_id, part_number, parts_total, concat_reference, transport, state, last_status, next_attempt_at, final_at, $11, credits
  FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::bigint[], $10::bigint[], $12::bigint[])
    WITH ORDINALITY AS t(recipient_id, campaign_id, part_number, parts_total, concat_reference, transport, state, last_status, next_attempt_at, final_at, credits, n)
  ORDER BY n`;

const MARK_DISPATCHED = `UPDATE recipients SET dispatch_state = 'dispatched', updated_at = $1 WHERE id = ANY($2::bigint[]) AND dispatch_state = 'waiting'`;

const RECIPIENT_STATUSES = `UPDATE recipients r SET status = u.status, last_status = u.last_status, updated_at = $1
  FROM unnest($2::bigint[], $3::text[], $4::text[]) AS u(id, status, last_status)
  WHERE r.id = u.id`;

export const CLOSE_CAMPAIGNS = `UPDATE campaigns c SET dispatched_at = $1
  WHERE c.id = ANY($2::text[]) AND c.dispatched_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM recipients r WHERE r.campaign_id = c.id AND r.dispatch_state = 'waiting')
  RETURNING c.id`;

/** A Delivery Receipt's webhook body (SPEC "Delivery Receipt"), made by the webhooks module. */
export type SerializeDeliveryReceipt = (row: DeliveryReceiptEvent) => string;

export class PgMaterialiseStore {
  constructor(
    private readonly client: PgClient,
    private readonly serializeReceipt: SerializeDeliveryReceipt,
  ) {}

  async readReadyCampaigns(nowMs: number, limit: number, cap: number): Promise<ReadyCampaign[]> {
    return (await this.client.query<ReadyCampaign>({ name: 'materialise-ready-campaigns', text: READY_CAMPAIGNS, values: [nowMs, limit, cap] })).rows;
  }

  async takeRecipients(shares: readonly RecipientShare[]): Promise<DueRecipient[]> {
    if (shares.length === 0) return [];
    return (await this.client.query<DueRecipient>({
      name: 'materialise-take-recipients', text: TAKE_RECIPIENTS, values: [shares.map((s) => s.campaignId), shares.map((s) => s.take)],
    })).rows;
  }

  async writeMaterialise(plan: MaterialiseWrite): Promise<MaterialiseWritten> {
    const { nowMs } = plan;
    await insertParts(this.client, plan.parts, nowMs);
    await markDispatched(this.client, plan.dispatched, nowMs);
    if (plan.statuses.length > 0) {
      const { statuses } = plan;
      await this.client.query({
        name: 'materialise-recipient-statuses',
        text: RECIPIENT_STATUSES,
        values: [nowMs, statuses.map((s) => s.recipientId), statuses.map((s) => s.status), statuses.map((s) => s.lastStatus)],
      });
    }
    // The planner queued a webhook only for a client it read to have a URL (the part-change ledger).
    await insertOutboxRows(this.client, plan.webhooks.map((w) => ({ clientId: w.clientId, recipientId: w.recipientId, body: this.serializeReceipt(w), nowMs })));
    const webhooksQueued = plan.webhooks.length;
    await applyCreditMovements(this.client, plan.credits, nowMs);
    const closedCampaigns = plan.closeCampaigns.length === 0 ? [] : (await this.client.query<{ id: string }>({
      name: 'materialise-close-campaigns', text: CLOSE_CAMPAIGNS, values: [nowMs, plan.closeCampaigns],
    })).rows.map((r) => r.id);
    return { closedCampaigns, webhooksQueued };
  }
}

/** New parts in one statement, ids assigned in the parts' order. */
export async function insertParts(db: PgQueryable, parts: readonly NewPart[], nowMs: number): Promise<void> {
  if (parts.length === 0) return;
  const column = <T>(pick: (p: NewPart) => T): T[] => parts.map(pick);
  await db.query({
    name: 'materialise-insert-parts',
    text: INSERT_PARTS,
    values: [column((p) => p.recipientId), column((p) => p.campaignId), column((p) => p.partNumber), column((p) => p.partsTotal),
      column((p) => p.concatReference), column((p) => p.transport), column((p) => p.state), column((p) => p.lastStatus),
      column((p) => p.nextAttemptAt), column((p) => p.finalAt), nowMs, column((p) => p.credits ?? 0)],
  });
}

/** Recipients 'waiting' -> 'dispatched' in one statement (those no longer waiting are left alone). */
export async function markDispatched(db: PgQueryable, recipientIds: readonly number[], nowMs: number): Promise<void> {
  if (recipientIds.length === 0) return;
  await db.query({ name: 'materialise-mark-dispatched', text: MARK_DISPATCHED, values: [nowMs, recipientIds] });
}
