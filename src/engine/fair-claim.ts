/**
 * Round robin over campaigns for one transport lane (a 1-recipient campaign of
 * another account waited 30 s behind a 30,000-recipient one when parts were claimed in one global
 * FIFO). Each claim splits its limit evenly over the campaigns with queued parts, gives what a
 * small campaign leaves unused to the others, and returns the messages interleaved campaign by
 * campaign, so a small campaign's messages go out with the next claim instead of after the large
 * one's backlog. A large campaign alone still gets the whole claim: its rate is unchanged.
 * When there are more campaigns than one claim holds, the next claim starts after the last
 * campaign served (a cursor over campaign ids), so none waits more than a few claims.
 */
import type { ClaimablePart, DispatchStore } from '../store/sqlite/dispatch-store.js';
import type { PgDispatchStore } from '../store/postgres/dispatch-store.js';
import { evenShares } from './even-shares.js';

/** One campaign's share in a claim round: take up to `want` of its due parts. */
interface ShareRequest {
  campaignId: string;
  want: number;
}

/**
 * One fair claim over both backends: the even shares of `limit` over the campaigns (evenShares),
 * each taken by the driver (next(parts)); returns the messages interleaved across campaigns.
 * `served` hears each campaign of the first round that got parts (the next claim's cursor).
 */
function* fairRounds(campaigns: readonly string[], limit: number, served: (campaignId: string) => void): Generator<ShareRequest, ClaimablePart[][], ClaimablePart[]> {
  const claimed = new Map<string, ClaimablePart[]>();
  const shares = evenShares(campaigns, limit);
  for (let share = shares.next(); share.done !== true; ) {
    const { candidate: campaignId, room, firstRound } = share.value;
    const parts = yield { campaignId, want: room };
    if (parts.length > 0) {
      const list = claimed.get(campaignId);
      if (list === undefined) claimed.set(campaignId, parts);
      else list.push(...parts);
      if (firstRound) served(campaignId);
    }
    share = shares.next(parts.length);
  }
  return interleave([...claimed.values()].map(messagesOf));
}

/** The campaigns a claim serves: those after the cursor, then (wrapping around) those before it, at most `limit`. */
function wrapAround(after: readonly string[], fromStart: readonly string[]): string[] {
  const seen = new Set(after);
  return [...after, ...fromStart.filter((id) => !seen.has(id))];
}

export class FairClaimer {
  /** The last campaign served by the previous claim: the next one starts after it. */
  private cursor = '';

  constructor(
    private readonly store: DispatchStore,
    private readonly transport: string,
  ) {}

  /**
   * Claims up to `limit` due parts ('queued' -> 'submitting'), run inside the caller's transaction.
   * Returns messages (the parts of one recipient), interleaved across campaigns.
   */
  claim(nowMs: number, limit: number): ClaimablePart[][] {
    const campaigns = this.campaigns(limit);
    if (campaigns.length === 0) return [];
    const rounds = fairRounds(campaigns, limit, (campaignId) => (this.cursor = campaignId));
    let step = rounds.next();
    while (step.done !== true) step = rounds.next(this.claimIn(step.value.campaignId, nowMs, step.value.want));
    return step.value;
  }

  private campaigns(limit: number): string[] {
    const after = this.store.queuedCampaigns(this.transport, this.cursor, limit);
    if (after.length >= limit || this.cursor === '') return after;
    return wrapAround(after, this.store.queuedCampaigns(this.transport, '', limit - after.length));
  }

  private claimIn(campaignId: string, nowMs: number, limit: number): ClaimablePart[] {
    const due = this.store.claimableInCampaign(this.transport, campaignId, nowMs, limit);
    // One statement marks the claim; a part no longer 'queued' is left out.
    const marked = this.store.markManySubmitting(due.map((p) => p.id), nowMs);
    return due.filter((p) => marked.has(p.id));
  }
}

/**
 * FairClaimer on PostgreSQL: the same rounds and cursor, each campaign's share
 * taken by one claimParts statement (FOR UPDATE SKIP LOCKED, stamped with the node id the lane
 * claims under), so nodes claiming at once never get the same part and never wait for each other.
 */
export class PgFairClaimer {
  private cursor = '';

  constructor(
    private readonly store: PgDispatchStore,
    private readonly transport: string,
  ) {}

  /**
   * `claimant`: the id the lane asked for before this claim and fences the parts' writes on. Not
   * asked again here: a rejoin during the claim would stamp the new id on parts whose writes are
   * fenced on the old one, leaving them 'submitting' under a live id that no reaper requeues.
   */
  async claim(nowMs: number, limit: number, claimant: string | null): Promise<ClaimablePart[][]> {
    const campaigns = await this.campaigns(limit);
    if (campaigns.length === 0) return [];
    const rounds = fairRounds(campaigns, limit, (campaignId) => (this.cursor = campaignId));
    let step = rounds.next();
    while (step.done !== true) {
      step = rounds.next(await this.store.claimParts(this.transport, step.value.campaignId, nowMs, step.value.want, claimant));
    }
    return step.value;
  }

  private async campaigns(limit: number): Promise<string[]> {
    const after = await this.store.queuedCampaigns(this.transport, this.cursor, limit);
    if (after.length >= limit || this.cursor === '') return after;
    return wrapAround(after, await this.store.queuedCampaigns(this.transport, '', limit - after.length));
  }
}

/** Groups a campaign's claimed parts per recipient, in claim order. */
function messagesOf(parts: readonly ClaimablePart[]): ClaimablePart[][] {
  const byRecipient = new Map<number, ClaimablePart[]>();
  for (const part of parts) {
    const group = byRecipient.get(part.recipient_id);
    if (group === undefined) byRecipient.set(part.recipient_id, [part]);
    else group.push(part);
  }
  return [...byRecipient.values()];
}

/** [a1, a2, a3], [b1] -> [a1, b1, a2, a3]. */
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
