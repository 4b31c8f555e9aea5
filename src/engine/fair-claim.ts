/**
 * A lane's claimer on each backend: read the candidates, plan the shares (steps/claim.ts, where
 * every decision of a claim is), write the claim. The only state is the cursor: the next claim
 * starts after the last campaign this one served.
 */
import type { SqliteDatabase } from '../store/sqlite/database.js';
import type { ClaimablePart } from '../store/sqlite/dispatch-store.js';
import { SqliteClaimStore } from '../store/sqlite/claim-queries.js';
import { PgClaimStore } from '../store/postgres/claim-queries.js';
import type { PgPool } from '../store/postgres/pool.js';
import { claimedMessages, planClaim, type ClaimStepStore } from './steps/claim.js';

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
    const plan = planClaim(this.store.readClaimCandidates(this.transport, this.cursor, nowMs, limit), limit, this.cursor);
    const parts = this.store.writeClaim(this.transport, plan.shares, nowMs, null);
    this.cursor = plan.cursor;
    return claimedMessages(plan.shares, parts);
  }
}

/** On PostgreSQL: two statements a claim, stamped with the claimant (claim-queries.ts). */
export class PgFairClaimer {
  private cursor = '';
  private readonly store: ClaimStepStore<'async'>;

  constructor(
    pool: PgPool,
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
    const plan = planClaim(await this.store.readClaimCandidates(this.transport, this.cursor, nowMs, limit), limit, this.cursor);
    const parts = await this.store.writeClaim(this.transport, plan.shares, nowMs, claimant);
    this.cursor = plan.cursor;
    return claimedMessages(plan.shares, parts);
  }
}
