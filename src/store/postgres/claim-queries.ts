/**
 * The store side of a lane's claim on PostgreSQL (ClaimStepStore<'async'> in
 * src/engine/steps/claim.ts): two named statements a claim, however many campaigns it is shared
 * among. The candidates are read without locks (a hint: a count another node made stale only makes
 * a share come back short); the claim itself is one atomic statement that picks each share's parts
 * FOR UPDATE SKIP LOCKED and marks them 'submitting' stamped with the claimant, so nodes claiming at
 * once never get the same part and never wait for each other. A claim that may give a rated client
 * parts adds, in one transaction, a locking read of the clients' send rates before deciding and one
 * update advancing them: nodes claiming for one rated client queue on its row, so its allowance is
 * spent once across the cluster.
 */
import type { ClaimablePart } from '../sqlite/dispatch-store.js';
import type { ClaimCandidate, ClaimWrite, ClientSendRate } from '../dispatch-steps.js';
import type { PgRunner } from './pool.js';

/** As CLAIM_CANDIDATES_SQL on SQLite (sqlite/claim-queries.ts): $1 transport, $2 cursor, $3 limit, $4 now. */
const CLAIM_CANDIDATES = `WITH RECURSIVE
    after_cursor(campaign_id, n) AS (
      SELECT (SELECT MIN(campaign_id) FROM message_parts WHERE transport = $1::text AND state = 'queued' AND campaign_id > $2::text), 1
      UNION ALL
      SELECT (SELECT MIN(campaign_id) FROM message_parts WHERE transport = $1::text AND state = 'queued' AND campaign_id > after_cursor.campaign_id), n + 1
      FROM after_cursor WHERE after_cursor.campaign_id IS NOT NULL AND n < $3::int
    ),
    up_to_cursor(campaign_id, n) AS (
      SELECT (SELECT MIN(campaign_id) FROM message_parts WHERE transport = $1::text AND state = 'queued' AND $2::text <> '' AND campaign_id <= $2::text), 1
      UNION ALL
      SELECT (SELECT MIN(campaign_id) FROM message_parts WHERE transport = $1::text AND state = 'queued' AND campaign_id > up_to_cursor.campaign_id AND campaign_id <= $2::text), n + 1
      FROM up_to_cursor WHERE up_to_cursor.campaign_id IS NOT NULL AND n < $3::int
    ),
    served AS (
      SELECT campaign_id, position FROM (
        SELECT campaign_id, n AS position FROM after_cursor WHERE campaign_id IS NOT NULL
        UNION ALL
        SELECT campaign_id, $3::int + n FROM up_to_cursor WHERE campaign_id IS NOT NULL
      ) listed ORDER BY position LIMIT $3::int
    )
  SELECT s.campaign_id AS "campaignId",
    (SELECT COUNT(*) FROM (SELECT 1 FROM message_parts p WHERE p.transport = $1::text AND p.state = 'queued' AND p.campaign_id = s.campaign_id
       AND p.next_attempt_at <= $4::bigint LIMIT $3::int) d)::int AS due,
    c.client_id AS "clientId", r.parts_per_second AS "partsPerSecond", r.next_part_at_us AS "nextPartAtUs"
  FROM served s
  LEFT JOIN campaigns c ON c.id = s.campaign_id AND EXISTS (SELECT 1 FROM client_send_rates)
  LEFT JOIN client_send_rates r ON r.client_id = c.client_id
  ORDER BY s.position`;

/** The rated clients' limiters, locked in client id order (every node's claims lock in the same order). */
const LOCK_SEND_RATES = `SELECT client_id AS "clientId", parts_per_second AS "partsPerSecond", next_part_at_us AS "nextPartAtUs"
  FROM client_send_rates WHERE client_id = ANY($1::bigint[]) ORDER BY client_id FOR UPDATE`;

/** A claim's advance of its rated clients' limiters (updated_at stays when the operator set the rate). */
const ADVANCE_SEND_RATES = `UPDATE client_send_rates r SET next_part_at_us = a.next_part_at_us
  FROM unnest($1::bigint[], $2::bigint[]) AS a(client_id, next_part_at_us) WHERE r.client_id = a.client_id`;

const CLAIM_SHARES = `WITH picked AS (
    SELECT p.id FROM unnest($1::text[], $2::int[]) AS s(campaign_id, take)
    CROSS JOIN LATERAL (
      SELECT id FROM message_parts
      WHERE state = 'queued' AND transport = $3 AND campaign_id = s.campaign_id AND next_attempt_at <= $4
      ORDER BY next_attempt_at, id LIMIT s.take
      FOR UPDATE SKIP LOCKED
    ) p
  )
  UPDATE message_parts p SET state = 'submitting', claimed_by = $5, updated_at = $4
  FROM picked, recipients r
  WHERE p.id = picked.id AND r.id = p.recipient_id
  RETURNING p.id, p.recipient_id, p.campaign_id, p.part_number, p.parts_total, p.concat_reference, p.attempts, r.msisdn, p.next_attempt_at`;

export class PgClaimStore {
  /**
   * On the pool, each statement is its own unit (a claim with no rated client needs no wider
   * transaction: see above); on a transaction's connection for lockSendRates and the writeClaim
   * that follows it.
   */
  constructor(private readonly db: PgRunner) {}

  async readClaimCandidates(transport: string, cursor: string, nowMs: number, limit: number): Promise<ClaimCandidate[]> {
    return (await this.db.query<ClaimCandidate>({ name: 'claim-candidates', text: CLAIM_CANDIDATES, values: [transport, cursor, limit, nowMs] })).rows;
  }

  /** Blocks while another node's claim holds one of the rows: the allowance it spends is then seen spent. */
  async lockSendRates(clientIds: readonly number[]): Promise<ClientSendRate[]> {
    return (await this.db.query<ClientSendRate>({ name: 'claim-lock-send-rates', text: LOCK_SEND_RATES, values: [clientIds] })).rows;
  }

  async writeClaim(transport: string, plan: ClaimWrite, nowMs: number, claimant: string | null): Promise<ClaimablePart[]> {
    const { shares, sendRates } = plan;
    if (sendRates.length > 0) {
      await this.db.query({
        name: 'claim-advance-send-rates', text: ADVANCE_SEND_RATES, values: [sendRates.map((a) => a.clientId), sendRates.map((a) => a.nextPartAtUs)],
      });
    }
    if (shares.length === 0) return [];
    const claimed = (await this.db.query<ClaimablePart & { next_attempt_at: number }>({
      name: 'claim-shares', text: CLAIM_SHARES, values: [shares.map((s) => s.campaignId), shares.map((s) => s.take), transport, nowMs, claimant],
    })).rows;
    // UPDATE ... RETURNING has no order: each campaign's parts oldest due first, as claimed.
    claimed.sort((a, b) => a.next_attempt_at - b.next_attempt_at || a.id - b.id);
    return claimed.map(({ next_attempt_at: _due, ...part }) => part);
  }
}
