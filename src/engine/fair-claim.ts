/**
 * A lane's claimer on each backend: read the candidates, lock the send rates of the rated clients
 * that may send now, plan the shares (steps/claim.ts, where every decision of a claim is),
 * write the claim. The only state is the cursor: the next claim starts after the last campaign
 * this one served. Nothing of a client's rate is kept here: it is read from the database at every
 * claim, so an operator's change applies at the next claim.
 */
import type { SqliteDatabase } from '../store/sqlite/database.js';
import type { ClaimablePart } from '../store/sqlite/dispatch-store.js';
import type { ClaimCandidate } from '../store/dispatch-steps.js';
import { SqliteClaimStore } from '../store/sqlite/claim-queries.js';
import { PgClaimStore } from '../store/postgres/claim-queries.js';
import { inTransaction, type PgPool } from '../store/postgres/pool.js';
import { claimedMessages, planClaim, sendRatesToLock, withLockedRates, type ClaimPlan, type ClaimStepStore } from './steps/claim.js';

/** On SQLite: runs inside the caller's transaction (a single gateway: its claims carry no stamp). */
export class FairClaimer {
  private cursor = '';
  private readonly store: ClaimStepStore<'sync'>;

  constructor(
    dispatch: { readonly db: SqliteDatabase },
    private readonly transport: string,
  ) {
    this.store = new SqliteClaimStore(dispatch.db);
  }

  /** Claims up to `limit` due parts ('queued' -> 'submitting'); messages interleaved across campaigns. */
  claim(nowMs: number, limit: number): ClaimablePart[][] {
    const read = this.store.readClaimCandidates(this.transport, this.cursor, nowMs, limit);
    const toLock = sendRatesToLock(read, nowMs);
    const candidates = toLock.length === 0 ? read : withLockedRates(read, toLock, this.store.lockSendRates(toLock));
    const plan = planClaim(candidates, limit, this.cursor, nowMs);
    const parts = this.store.writeClaim(this.transport, plan, nowMs, null);
    this.cursor = plan.cursor;
    return claimedMessages(plan.shares, parts);
  }
}

/**
 * On PostgreSQL: two statements a claim, stamped with the claimant (claim-queries.ts). A claim
 * with rated clients locks their send rates, plans and writes in one transaction, so the nodes of
 * a cluster spend a client's allowance one after the other, never the same allowance twice.
 */
export class PgFairClaimer {
  private cursor = '';
  private readonly store: ClaimStepStore<'async'>;

  constructor(
    private readonly pool: PgPool,
    private readonly transport: string,
  ) {
    this.store = new PgClaimStore(pool);
  }

  /**
   * `claimant`: the id the lane asked for before this claim and fences the parts' writes on. Not
   * asked again here: a rejoin during the claim would stamp the new id on parts whose writes are
   * fenced on the old one, leaving them 'submitting' under a live id that no reaper requeues.
   */
  async claim(nowMs: number, limit: number, claimant: string | null): Promise<ClaimablePart[][]> {
    const read = await this.store.readClaimCandidates(this.transport, this.cursor, nowMs, limit);
    const toLock = sendRatesToLock(read, nowMs);
    const { plan, parts } = toLock.length === 0
      ? await this.planAndWrite(this.store, read, nowMs, limit, claimant)
      : await inTransaction(this.pool, async (client) => {
        const store = new PgClaimStore(client);
        return this.planAndWrite(store, withLockedRates(read, toLock, await store.lockSendRates(toLock)), nowMs, limit, claimant);
      });
    this.cursor = plan.cursor;
    return claimedMessages(plan.shares, parts);
  }

  private async planAndWrite(
    store: ClaimStepStore<'async'>, candidates: readonly ClaimCandidate[], nowMs: number, limit: number, claimant: string | null,
  ): Promise<{ plan: ClaimPlan; parts: ClaimablePart[] }> {
    const plan = planClaim(candidates, limit, this.cursor, nowMs);
    return { plan, parts: await store.writeClaim(this.transport, plan, nowMs, claimant) };
  }
}
