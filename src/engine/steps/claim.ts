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
 *
 * A client with a send rate (client_send_rates) takes at most what its limiter allows now
 * (src/engine/send-rate.ts) across all its campaigns in the claim; what it cannot take goes to the
 * other campaigns, so a client at its rate is skipped, not waited for. The rate's state is read
 * with the candidates (joined: a claim with no rated client costs nothing more), read again under
 * a lock before deciding when a rated client may send now (lockSendRates: on PostgreSQL FOR
 * UPDATE, so two nodes never spend one allowance), and advanced by writeClaim in the claim's
 * transaction.
 * The state is the client's, not the transport's: the cap holds across all its transports.
 */
import type { StoreMode, StoreResult } from '../store-mode.js';
import { fillEvenShares } from '../even-shares.js';
import { advancedTo, partsAllowed, type SendRateState } from '../send-rate.js';
import type { ClaimablePart } from '../../store/sqlite/dispatch-store.js';
import type { ClaimCandidate, ClaimShare, ClaimWrite, ClientSendRate } from '../../store/dispatch-steps.js';

export type { ClaimWrite } from '../../store/dispatch-steps.js';

/**
 * The store side of a claim. SQLite runs all three in the caller's transaction. On PostgreSQL the
 * candidates are a hint read without locks (a count made stale by another node only makes a share
 * come back short); a claim with no rated client writes with one atomic statement, one with rated
 * clients runs lockSendRates and writeClaim in one transaction.
 */
export interface ClaimStepStore<M extends StoreMode> {
  /**
   * Up to `limit` campaigns with 'queued' parts on the transport, in serving order: those after
   * `cursor` by campaign id, then from the first up to and including `cursor` ('' for the start);
   * each with its parts due at `nowMs` counted up to `limit` (a campaign whose parts all wait for a
   * later retry is listed with 0), its client, and the client's send rate if it has one.
   */
  readClaimCandidates(transport: string, cursor: string, nowMs: number, limit: number): StoreResult<M, ClaimCandidate[]>;
  /**
   * The send rates of `clientIds` (ascending) as they are now, held until the claim's transaction
   * ends: PostgreSQL locks the rows FOR UPDATE in client id order (claims on every node lock in
   * the same order, so they queue rather than deadlock); on SQLite the transaction already excludes
   * every other writer. A client whose row is gone is left out (unlimited now).
   */
  lockSendRates(clientIds: readonly number[]): StoreResult<M, ClientSendRate[]>;
  /**
   * Each share's oldest due parts (next_attempt_at, then id), up to `take`, moved 'queued' ->
   * 'submitting' and stamped with `claimant` (the node id every write ending the claim is fenced
   * on; null for a single gateway). A part is returned to exactly one caller however many claim at
   * once (PostgreSQL: FOR UPDATE SKIP LOCKED, parts another node is claiming are passed over, not
   * waited for). Each campaign's parts come oldest due first. The plan's send-rate advances are
   * written in the same transaction (none: no statement).
   */
  writeClaim(transport: string, plan: ClaimWrite, nowMs: number, claimant: string | null): StoreResult<M, ClaimablePart[]>;
}

export interface ClaimPlan extends ClaimWrite {
  /** The next claim's cursor: the last campaign served in the first round (unchanged if none was). */
  cursor: string;
}

/**
 * The rated clients a claim must lock before deciding, ascending (the order lockSendRates locks
 * them in): those whose limiter, as the candidates read it without a lock, allows a part at
 * `nowMs`. One it allows nothing is left unlocked and gets nothing in this claim: the limiter only
 * moves forward, so a locked read could not allow more (a rate raised meanwhile shows at the next
 * claim). A client at its rate therefore costs other clients' claims no lock and no transaction.
 */
export function sendRatesToLock(candidates: readonly ClaimCandidate[], nowMs: number): number[] {
  const toLock = new Set<number>();
  for (const c of candidates) {
    const state = stateOf(c);
    if (state !== undefined && c.clientId !== null && partsAllowed(state, nowMs) > 0) toLock.add(c.clientId);
  }
  return [...toLock].sort((a, b) => a - b);
}

/**
 * The candidates with the send rates of the `locked` clients as lockSendRates returned them: the
 * locked state replaces the unlocked read, and a locked client whose row went meanwhile is
 * unlimited. Other candidates are as read.
 */
export function withLockedRates(candidates: readonly ClaimCandidate[], locked: readonly number[], rows: readonly ClientSendRate[]): ClaimCandidate[] {
  const lockedIds = new Set(locked);
  const byClient = new Map(rows.map((r) => [r.clientId, r]));
  return candidates.map((c) => {
    if (c.clientId === null || !lockedIds.has(c.clientId)) return c;
    const rate = byClient.get(c.clientId);
    return { ...c, partsPerSecond: rate?.partsPerSecond ?? null, nextPartAtUs: rate?.nextPartAtUs ?? null };
  });
}

function stateOf(candidate: ClaimCandidate): SendRateState | undefined {
  return candidate.partsPerSecond === null ? undefined : { partsPerSecond: candidate.partsPerSecond, nextPartAtUs: candidate.nextPartAtUs ?? 0 };
}

/**
 * Each candidate's share of `limit` parts (candidates as readClaimCandidates returned them, their
 * rates locked), the next cursor, and where each rated client's limiter stands after the claim.
 * Even shares, but a rated client's campaigns together take at most what its limiter allows at
 * `nowMs`; what they cannot take goes to the other campaigns.
 */
export function planClaim(candidates: readonly ClaimCandidate[], limit: number, cursor: string, nowMs: number): ClaimPlan {
  const rates = new Map<number, SendRateState>();
  for (const c of candidates) {
    const state = stateOf(c);
    if (state !== undefined && c.clientId !== null && !rates.has(c.clientId)) rates.set(c.clientId, state);
  }
  const ratedClientOf = (c: ClaimCandidate): number | undefined => (c.clientId !== null && rates.has(c.clientId) ? c.clientId : undefined);
  const caps = new Map([...rates].map(([clientId, state]) => [clientId, partsAllowed(state, nowMs)]));
  const filled = fillEvenShares(candidates.slice(0, limit), (c) => c.due, limit, { groupOf: ratedClientOf, caps });
  const servedFirst = filled.filter((f) => f.servedFirstRound);
  const taken = new Map<number, number>();
  for (const f of filled) {
    const clientId = ratedClientOf(f.candidate);
    if (f.take > 0 && clientId !== undefined) taken.set(clientId, (taken.get(clientId) ?? 0) + f.take);
  }
  return {
    shares: filled.filter((f) => f.take > 0).map((f) => ({ campaignId: f.candidate.campaignId, take: f.take })),
    cursor: servedFirst.at(-1)?.candidate.campaignId ?? cursor,
    sendRates: [...taken].sort(([a], [b]) => a - b)
      .map(([clientId, parts]) => ({ clientId, nextPartAtUs: advancedTo(rates.get(clientId) as SendRateState, parts, nowMs) })),
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
