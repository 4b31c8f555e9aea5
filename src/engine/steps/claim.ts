/**
 * A lane's claim, fair across campaigns (a 1-recipient campaign of another account waited 30 s
 * behind a 30,000-recipient one when parts were claimed in one global FIFO):
 *   read   the campaigns with queued parts on the transport, in serving order (after the previous
 *          claim's cursor, then wrapping around), each with its due parts counted (readClaimCandidates);
 *   decide each campaign's share of the limit: even shares, what a small campaign leaves unused
 *          going to the others, and the next claim's cursor (planClaim);
 *   write  the shares' parts 'queued' -> 'submitting', stamped with the claimant (writeClaim);
 * and returns the messages (a recipient's parts) interleaved campaign by campaign (claimedMessages),
 * so a small campaign's messages go out with the next claim instead of after the large one's
 * backlog. A large campaign alone still gets the whole claim: its rate is unchanged. With more
 * campaigns than one claim holds, the next claim starts after the last campaign served, so none
 * waits more than a few claims.
 */
import type { StoreMode, StoreResult } from '../store-mode.js';
import { fillEvenShares } from '../even-shares.js';
import type { ClaimablePart } from '../../store/sqlite/dispatch-store.js';
import type { ClaimCandidate, ClaimShare } from '../../store/dispatch-steps.js';

/**
 * The store side of a claim. SQLite runs both in the caller's transaction. On PostgreSQL the
 * candidates are a hint read without locks (a count made stale by another node only makes a share
 * come back short), and writeClaim is one atomic statement.
 */
export interface ClaimStepStore<M extends StoreMode> {
  /**
   * Up to `limit` campaigns with 'queued' parts on the transport, in serving order: those after
   * `cursor` by campaign id, then from the first up to and including `cursor` ('' for the start);
   * each with its parts due at `nowMs` counted up to `limit` (a campaign whose parts all wait for a
   * later retry is listed with 0).
   */
  readClaimCandidates(transport: string, cursor: string, nowMs: number, limit: number): StoreResult<M, ClaimCandidate[]>;
  /**
   * Each share's oldest due parts (next_attempt_at, then id), up to `take`, moved 'queued' ->
   * 'submitting' and stamped with `claimant` (the node id every write ending the claim is fenced
   * on; null for a single gateway). A part is returned to exactly one caller however many claim at
   * once (PostgreSQL: FOR UPDATE SKIP LOCKED, parts another node is claiming are passed over, not
   * waited for). Each campaign's parts come oldest due first.
   */
  writeClaim(transport: string, shares: readonly ClaimShare[], nowMs: number, claimant: string | null): StoreResult<M, ClaimablePart[]>;
}

export interface ClaimPlan {
  /** In serving order; campaigns with nothing due are left out. */
  shares: ClaimShare[];
  /** The next claim's cursor: the last campaign served in the first round (unchanged if none was). */
  cursor: string;
}

/** Each candidate's share of `limit` parts (candidates as readClaimCandidates returned them), and the next cursor. */
export function planClaim(candidates: readonly ClaimCandidate[], limit: number, cursor: string): ClaimPlan {
  const filled = fillEvenShares(candidates.slice(0, limit), (c) => c.due, limit);
  const servedFirst = filled.filter((f) => f.servedFirstRound);
  return {
    shares: filled.filter((f) => f.take > 0).map((f) => ({ campaignId: f.candidate.campaignId, take: f.take })),
    cursor: servedFirst.at(-1)?.candidate.campaignId ?? cursor,
  };
}

/**
 * The claimed parts as messages (a recipient's parts, in claim order), interleaved across the
 * campaigns in the shares' order: [a1, a2, a3], [b1] -> [a1, b1, a2, a3].
 */
export function claimedMessages(shares: readonly ClaimShare[], parts: readonly ClaimablePart[]): ClaimablePart[][] {
  const byCampaign = new Map<string, Map<number, ClaimablePart[]>>(shares.map((s) => [s.campaignId, new Map()]));
  for (const part of parts) {
    let recipients = byCampaign.get(part.campaign_id);
    if (recipients === undefined) byCampaign.set(part.campaign_id, (recipients = new Map()));
    const message = recipients.get(part.recipient_id);
    if (message === undefined) recipients.set(part.recipient_id, [part]);
    else message.push(part);
  }
  return interleave([...byCampaign.values()].map((recipients) => [...recipients.values()]));
}

function interleave<T>(lists: readonly (readonly T[])[]): T[] {
  const out: T[] = [];
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) {
    for (const list of lists) {
      const item = list[i];
      if (item !== undefined) out.push(item);
    }
  }
  return out;
}
