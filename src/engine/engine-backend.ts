/**
 * The engine's backend seam: what DispatchEngine and its lanes ask of the
 * database, in coarse units. SQLite answers with the synchronous code it always had (group-committed
 * WriteBatcher, FairClaimer inside db.transaction: sqlite-backend.ts); PostgreSQL runs each unit as
 * one transaction on one pooled connection, fenced on the node id (pg/backend.ts). Which one the
 * engine uses follows from the store it is given (DispatchEngineDeps.store).
 */
import type { NodeIdSource } from '../common/node-id.js';
import type { Store } from '../store/sqlite/database.js';
import type { ClaimablePart, DueCampaign } from '../store/sqlite/dispatch-store.js';
import type { InboundStore } from '../store/sqlite/inbound-store.js';
import type { PgPool } from '../store/postgres/pool.js';
import type { Async } from '../store/ports.js';
import type { UndecodablePduStore } from '../store/sqlite/undecodable-pdu-store.js';
import type { TransportReceipt } from '../transports/transport.js';
import type { OutcomeCounts, SubmitResult } from './steps/outcomes.js';
import type { MaterializeResult, Routing } from './steps/materialise.js';
import type { PartReroute, QueuedPartsQuery } from './steps/reroute.js';

/** The engine on PostgreSQL: the node's pool and the id its claims and fenced writes carry. */
export interface PostgresEngineStore {
  readonly kind: 'postgres';
  readonly pool: PgPool;
  readonly node: NodeIdSource;
}

/** What DispatchEngine runs on: a SQLite Store (the default gateway), or PostgreSQL. */
export type EngineStore = Store | PostgresEngineStore;

export function isPostgresEngineStore(store: EngineStore): store is PostgresEngineStore {
  return 'kind' in store && store.kind === 'postgres';
}

/** One lane's claims, fair across campaigns (FairClaimer). */
export interface LaneClaimer {
  /**
   * Claims up to `limit` due parts ('queued' -> 'submitting') as messages (a recipient's parts), interleaved across campaigns.
   * `claimant`: the node id to stamp them with (EngineBackend.claimantId(), asked once by the lane,
   * which fences every write of these parts on the same id); a single gateway's claims have none.
   */
  claim(nowMs: number, limit: number, claimant: string | null): Promise<ClaimablePart[][]>;
}

export interface BackendStats {
  outcomes: OutcomeCounts;
  receiptsMatched: number;
  /** Receipts stored unmatched (their part had no message id yet). */
  receiptsUnmatched: number;
  commits: number;
  failedCommits: number;
  fencedWrites: number;
}

export interface EngineBackend {
  /** Crash recovery before the transports start (what a start may requeue depends on the backend). */
  recover(nowMs: number): Promise<{ requeued: number; reopened: number }>;
  /** Due recipients -> durable parts, up to batchSize recipients in one unit. */
  materializeDue(nowMs: number, batchSize: number): Promise<MaterializeResult>;
  /**
   * One batch of the reroute step in one transaction: the queued parts the query names, planned
   * (planReroute, `afterFailure` as there) and written. `lastId`: the highest part id read (the next batch's cursor).
   */
  rerouteBatch(query: QueuedPartsQuery, routing: Routing, nowMs: number, afterFailure?: boolean): Promise<{ read: number; lastId: number; applied: PartReroute[] }>;
  claimerFor(transport: string): LaneClaimer;
  /** The campaigns named, in one read (any order; a campaign that is gone is left out). */
  campaignTexts(campaignIds: readonly string[]): Promise<DueCampaign[]>;
  /** Resolves once the outcomes are committed (retried while the store refuses them for a passing reason). */
  writeOutcomes(result: SubmitResult): Promise<void>;
  /** Stores and applies one receipt; resolves after the commit (then the transport acknowledges it). */
  acceptReceipt(transport: string, receipt: TransportReceipt): Promise<void>;
  /** The periodic unmatched-receipt sweep: those whose part exists by now are applied, those still unmatched received before the cutoff expired. Returns the expired. */
  sweepReceipts(expireReceivedBeforeMs: number): Promise<number>;
  isSubmittedMessageId(transport: string, messageId: string): Promise<boolean>;
  messageIdsAwaitingReceipt(transport: string): Promise<string[]>;
  readonly undecodable: Async<UndecodablePduStore>;
  readonly inbound: Async<InboundStore>;
  /** True while outcome or receipt writes are being retried: claim nothing new meanwhile. */
  readonly stalled: boolean;
  /**
   * False while this node may have lost its claims (a cluster node whose last confirmed heartbeat is
   * older than its lease allows: NodeIdSource.leaseHeld): the lanes neither claim nor submit meanwhile.
   * Always true for a single gateway.
   */
  readonly leaseHeld: boolean;
  /**
   * The node id claims are stamped with now (null for a single gateway). A node that was fenced
   * rejoins under a new id: messages it claimed under the old one are void, whatever the lease.
   */
  claimantId(): string | null;
  /** The engine is stopping: temporary failures hold their part instead of spending an attempt. */
  beginStop(): void;
  /** After the drain: a last try for queued writes, then none; requeues this engine's parts still 'submitting'. */
  finishStop(nowMs: number): Promise<number>;
  stats(): BackendStats;
}
