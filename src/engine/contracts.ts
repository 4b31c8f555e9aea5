/**
 * What the dispatch engine needs from a store, once for both backends.
 *
 * Every engine step is read -> decide -> write: the backend reads what the step needs, a pure
 * planner in src/engine/steps/ (no I/O; time is a parameter) returns a typed write plan, and the
 * backend writes the plan in the same transaction as the reads. The store side of each step is an
 * interface generic over the mode, so the SQLite store (synchronous: better-sqlite3 answers in
 * microseconds and its group commit wraps a whole batch of units in one transaction) and the
 * PostgreSQL store (asynchronous: one transaction on one pooled connection) implement the same
 * contract and the compiler checks both. The decisions live only in the planners.
 *
 * Shared guarantees of every method of a step store:
 * - It runs inside the caller's transaction; a read and the write of its plan are never split
 *   across transactions.
 * - A write that ends a claim is fenced on the claimant node id the claim was stamped with
 *   (PostgreSQL; a single SQLite gateway has no claimant) and changes nothing when it is not that
 *   node's claim any more.
 * - A final part state is never overwritten: duplicates and late receipts change nothing.
 */
import type { ClaimStepStore } from './steps/claim.js';
import type { MaterialiseStepStore } from './steps/materialise.js';
import type { OutcomeStepStore } from './steps/outcomes.js';
import type { PartChangesStore } from './steps/part-changes.js';
import type { ReceiptStepStore } from './steps/receipts.js';
import type { RecoveryStepStore } from './steps/recovery.js';
import type { RerouteStepStore } from './steps/reroute.js';
import type { UnmatchedReceiptStore } from './steps/unmatched-receipts.js';

import type { StoreMode } from './store-mode.js';

export type { StoreMode, StoreResult } from './store-mode.js';

/**
 * Everything the engine's steps need from a store, one member per step (each step's contract and
 * its guarantees are in its steps/ file), for one backend and one transaction's connection:
 * SQLite builds EngineStepStores<'sync'> (sqliteStepStores), PostgreSQL EngineStepStores<'async'>
 * over each unit's client (pgStepStores). The compiler holds both to every step's contract.
 */
export interface EngineStepStores<M extends StoreMode> {
  materialise: MaterialiseStepStore<M>;
  claim: ClaimStepStore<M>;
  recovery: RecoveryStepStore<M>;
  partChanges: PartChangesStore<M>;
  outcomes: OutcomeStepStore<M>;
  receipts: ReceiptStepStore<M>;
  unmatchedReceipts: UnmatchedReceiptStore<M>;
  reroute: RerouteStepStore<M>;
}
