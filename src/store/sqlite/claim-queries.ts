/**
 * The store side of a lane's claim on SQLite (ClaimStepStore<'sync'> in src/engine/steps/claim.ts):
 * prepared statements run inside the caller's db.transaction, served by the message_parts_fair_claim
 * index (transport, state, campaign_id, next_attempt_at). Each candidate's client and send rate
 * are joined by primary key, only while some client has a rate: with client_send_rates empty the
 * join stops at one constant subquery, evaluated once, so a claim costs what it did before rates.
 */
import type { ClaimCandidate, ClaimWrite, ClientSendRate } from '../dispatch-steps.js';
import type { SqliteDatabase } from './database.js';
import { BATCH_SQL, CLAIM_SQL, type ClaimablePart } from './dispatch-store.js';

/**
 * The campaigns a claim serves, in serving order, with their due parts counted: exported so
 * test/engine/claim-index.test.ts can check its plan. Two recursive skip-scans (one index seek per
 * campaign however many parts each has): the campaigns after @cursor, then from the first up to and
 * including @cursor; the first @limit of them, each with its parts due by @now counted up to @limit
 * (index only).
 */
export const CLAIM_CANDIDATES_SQL = `WITH RECURSIVE
    after_cursor(campaign_id, n) AS (
      SELECT (SELECT MIN(campaign_id) FROM message_parts WHERE transport = @transport AND state = 'queued' AND campaign_id > @cursor), 1
      UNION ALL
      SELECT (SELECT MIN(campaign_id) FROM message_parts WHERE transport = @transport AND state = 'queued' AND campaign_id > after_cursor.campaign_id), n + 1
      FROM after_cursor WHERE after_cursor.campaign_id IS NOT NULL AND n < @limit
    ),
    up_to_cursor(campaign_id, n) AS (
      SELECT (SELECT MIN(campaign_id) FROM message_parts WHERE transport = @transport AND state = 'queued' AND @cursor <> '' AND campaign_id <= @cursor), 1
      UNION ALL
      SELECT (SELECT MIN(campaign_id) FROM message_parts WHERE transport = @transport AND state = 'queued' AND campaign_id > up_to_cursor.campaign_id AND campaign_id <= @cursor), n + 1
      FROM up_to_cursor WHERE up_to_cursor.campaign_id IS NOT NULL AND n < @limit
    ),
    served(campaign_id, position) AS (
      SELECT campaign_id, position FROM (
        SELECT campaign_id, n AS position FROM after_cursor WHERE campaign_id IS NOT NULL
        UNION ALL
        SELECT campaign_id, @limit + n FROM up_to_cursor WHERE campaign_id IS NOT NULL
      ) ORDER BY position LIMIT @limit
    )
  SELECT s.campaign_id AS campaignId,
    (SELECT COUNT(*) FROM (SELECT 1 FROM message_parts p WHERE p.transport = @transport AND p.state = 'queued' AND p.campaign_id = s.campaign_id
       AND p.next_attempt_at <= @now LIMIT @limit)) AS due,
    c.client_id AS clientId, r.parts_per_second AS partsPerSecond, r.next_part_at_us AS nextPartAtUs
  FROM served s
  LEFT JOIN campaigns c ON c.id = s.campaign_id AND EXISTS (SELECT 1 FROM client_send_rates)
  LEFT JOIN client_send_rates r ON r.client_id = c.client_id
  ORDER BY s.position`;

/**
 * The oldest due part of each campaign named in @campaigns (a JSON array), in one statement: the
 * shares of one part each, which is every share when the candidates are many one-part campaigns
 * (one SMPP submit_sm is one), so such a claim costs one statement, not one a campaign. Each
 * campaign's part is the one CLAIM_SQL.claimableInCampaign would take first (same index seek,
 * same order), so a share claims the same part either way; no ORDER BY (no sort): claimedMessages
 * groups the parts by share whatever their order.
 */
export const CLAIM_FIRST_OF_CAMPAIGNS_SQL = `SELECT p.id, p.recipient_id, p.campaign_id, p.part_number, p.parts_total, p.concat_reference, p.attempts, r.msisdn
  FROM json_each(@campaigns) j
  JOIN message_parts p ON p.id = (SELECT q.id FROM message_parts q WHERE q.state = 'queued' AND q.transport = @transport AND q.campaign_id = j.value
    AND q.next_attempt_at <= @now ORDER BY q.next_attempt_at, q.id LIMIT 1)
  JOIN recipients r ON r.id = p.recipient_id`;

/** Rated clients' limiters (ids as a JSON array), ascending; and a claim's advance of one. */
export const SEND_RATE_SQL = {
  read: `SELECT client_id AS clientId, parts_per_second AS partsPerSecond, next_part_at_us AS nextPartAtUs
    FROM client_send_rates WHERE client_id IN (SELECT value FROM json_each(?)) ORDER BY client_id`,
  // updated_at stays when the operator set the rate: the claim moves only the limiter's state.
  advance: `UPDATE client_send_rates SET next_part_at_us = ? WHERE client_id = ?`,
} as const;

export class SqliteClaimStore {
  private readonly s;

  constructor(db: SqliteDatabase) {
    this.s = {
      candidates: db.prepare<[{ transport: string; cursor: string; now: number; limit: number }], ClaimCandidate>(CLAIM_CANDIDATES_SQL),
      claimable: db.prepare<[string, string, number, number], ClaimablePart>(CLAIM_SQL.claimableInCampaign),
      firstOfCampaigns: db.prepare<[{ campaigns: string; transport: string; now: number }], ClaimablePart>(CLAIM_FIRST_OF_CAMPAIGNS_SQL),
      markSubmitting: db.prepare<[number, string], number>(BATCH_SQL.markManySubmitting).pluck(),
      sendRates: db.prepare<[string], ClientSendRate>(SEND_RATE_SQL.read),
      advanceSendRate: db.prepare<[number, number]>(SEND_RATE_SQL.advance),
    };
  }

  readClaimCandidates(transport: string, cursor: string, nowMs: number, limit: number): ClaimCandidate[] {
    return this.s.candidates.all({ transport, cursor, now: nowMs, limit });
  }

  /** Read in the caller's transaction, which no other writer shares: no lock to take. */
  lockSendRates(clientIds: readonly number[]): ClientSendRate[] {
    return this.s.sendRates.all(JSON.stringify(clientIds));
  }

  /** A single gateway on its own file: nothing else claims, and its parts carry no stamp (`claimant` is null). */
  writeClaim(transport: string, plan: ClaimWrite, nowMs: number, _claimant: string | null): ClaimablePart[] {
    for (const advance of plan.sendRates) this.s.advanceSendRate.run(advance.nextPartAtUs, advance.clientId);
    // Shares of one part in one statement; larger shares a statement each (order does not matter:
    // claimedMessages groups the parts by share).
    const singles = plan.shares.filter((share) => share.take === 1).map((share) => share.campaignId);
    const due = plan.shares.flatMap((share) => (share.take === 1 ? [] : this.s.claimable.all(transport, share.campaignId, nowMs, share.take)));
    if (singles.length > 0) due.push(...this.s.firstOfCampaigns.all({ campaigns: JSON.stringify(singles), transport, now: nowMs }));
    if (due.length === 0) return [];
    // One statement marks the claim; a part no longer 'queued' is left out.
    const marked = new Set(this.s.markSubmitting.all(nowMs, JSON.stringify(due.map((p) => p.id))));
    return due.filter((p) => marked.has(p.id));
  }
}
