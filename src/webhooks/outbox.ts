/**
 * The outbox as the webhook sender sees it: where it takes due events from and
 * writes their results to. Two implementations: SqliteWebhookOutbox (one gateway on its SQLite file,
 * every method answering synchronously) and PgWebhookOutbox (a node of a cluster on PostgreSQL:
 * events leased to this node, results fenced on the lease).
 *
 * A method may answer with its value or with a promise of it. SQLite answers at once, and the
 * sender keeps its synchronous timing on it (start()'s first look, a pass started in the clock's
 * timer starting its requests before the clock step returns: the fake-clock tests rely on both);
 * PostgreSQL answers after a round trip.
 */
import { FAILURE_LOG_INTERVAL_MS, FailureLog } from '../common/failure-log.js';
import type { Logger } from '../common/log.js';
import type { AttemptRecord, DueOutboxRow, RedriveEndpoint, RedriveFilter } from '../store/sqlite/webhook-store.js';

export type MaybePromise<T> = T | Promise<T>;

/** What a results write did: the ids whose result was refused (the lease was lost) and so changed nothing. */
export interface ResultsWritten {
  refusedIds: readonly number[];
}

/**
 * Which due events an unleased outbox returns: those with an id above `afterId`, lowest id first
 * (the rows queued since a read that returned afterId); or all of them but `heldIds` (the rows the
 * sender holds), oldest due first.
 */
export type UnleasedRead =
  | { kind: 'after'; afterId: number }
  | { kind: 'all-but'; heldIds: ReadonlySet<number> };

export const NOTHING_REFUSED: ResultsWritten = Object.freeze({ refusedIds: Object.freeze([]) });

/**
 * What requeueProbe did: re-queued a dead letter as the endpoint's probe (`claimed` is the row
 * already leased to this sender, to send now, or null when the next read finds it); found no
 * redrivable dead letter left (stop tracking the endpoint); or found another sender's probe of the
 * endpoint still out (try again a window later).
 */
export type ProbeOutcome =
  | { kind: 'requeued'; id: number; claimed: DueOutboxRow | null }
  | { kind: 'none-left' }
  | { kind: 'in-flight' };

export interface WebhookOutbox {
  /**
   * Whether claimDue leases what it returns to this sender alone (PostgreSQL). A leased row is never
   * returned again while its lease lasts, so the sender claims only what it can send soon; an
   * unleased outbox (SQLite, one sender per file) is told what the sender holds (UnleasedRead)
   * and leaves those rows out.
   */
  readonly leasesRows: boolean;
  /**
   * Whether a results write that failed (the database unreachable) is kept and tried again. Without
   * it the results are dropped and their rows, still pending, are sent again.
   */
  readonly retriesFailedWrites: boolean;
  /**
   * Due pending events, oldest due first, at most maxRows. A leasing outbox leases them for leaseMs:
   * no other sender gets them until the lease ends or the result is written. An unleased one is
   * told what the sender already holds (`read`), so it returns each row about once; a leasing one
   * is never given `read`.
   */
  claimDue(nowMs: number, maxRows: number, leaseMs: number, read?: UnleasedRead): MaybePromise<DueOutboxRow[]>;
  /** Attempt results; a row no longer pending (or no longer leased to this sender) is left alone and reported. */
  recordAttempts(records: readonly AttemptRecord[]): MaybePromise<ResultsWritten>;
  /** Gives a row inserted without an event id its id, once; returns it. */
  assignEventId(id: number): MaybePromise<string>;
  /** Endpoints with redrivable dead letters (read at start). */
  listRedriveEndpoints(cutoffMs: number): MaybePromise<RedriveEndpoint[]>;
  /** Re-queues the endpoint's oldest redrivable dead letter alone, as its probe. */
  requeueProbe(filter: RedriveFilter, nowMs: number, leaseMs: number): MaybePromise<ProbeOutcome>;
  /** Re-queues the endpoint's redrivable dead letters as fresh series due at nowMs; how many. */
  redriveDeadLetters(filter: RedriveFilter, nowMs: number): MaybePromise<number>;
  /** Rows claimed and not going to be sent (the sender stops): other senders may take them at once. */
  release(ids: readonly number[]): MaybePromise<void>;
}

/**
 * Runs `call` and hands its outcome to onValue or onError: at once when it answered synchronously
 * (null is returned), once it settles otherwise (`deferred` says which; the promise returned
 * resolves after the callback ran, and rejects only if the callback threw).
 */
export function settle<T>(
  call: () => MaybePromise<T>,
  onValue: (value: T, deferred: boolean) => void,
  onError: (err: unknown, deferred: boolean) => void,
): Promise<void> | null {
  let answer: MaybePromise<T>;
  try {
    answer = call();
  } catch (err) {
    onError(err, false);
    return null;
  }
  if (answer instanceof Promise) return answer.then((value) => onValue(value, true), (err: unknown) => onError(err, true));
  onValue(answer, false);
  return null;
}

const UNREACHABLE = 'webhook outbox unreachable; retrying (one line per interval while it lasts)';

/**
 * How the sender logs an outbox it cannot reach (a PostgreSQL failover drops every connection for
 * seconds): the shared FailureLog with the sender's messages. The first failure is logged at once,
 * then at most one line per interval however often the sender tries (a poll every 200 ms would
 * otherwise log five lines a second), each saying how many failures it stands for; the first
 * success after it logs the end of the outage. Each failure says what could not be done
 * (`{ what: 'reading due events' }`). Time is the sender's clock.
 */
export function outboxFailureLog(logger: Logger, now: () => number, intervalMs = FAILURE_LOG_INTERVAL_MS): FailureLog {
  return new FailureLog(logger, 'the webhook outbox', intervalMs, now, {
    level: 'error',
    recoveredLevel: 'info',
    messages: { failed: UNREACHABLE, stillFailing: UNREACHABLE, recovered: 'webhook outbox reachable again' },
  });
}
