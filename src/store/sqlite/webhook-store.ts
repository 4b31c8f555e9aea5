/**
 * SQL of the webhook outbox (table webhook_outbox, migrations/1763740000000-initial-schema.ts).
 * Prepared statements on the raw better-sqlite3 handle: enqueue runs inside the engine's receipt
 * transaction, and the sender writes attempt results in batches, one transaction each.
 */
import { MultiRowInsert } from './multi-row-insert.js';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import type { SqliteDatabase } from './database.js';
import { commitWithoutOwnSync } from './deferred-sync.js';

export type OutboxState = 'pending' | 'delivered' | 'dead';
/** What an event is; it chooses the client URL it goes to (webhook_url or inbound_webhook_url). */
export type OutboxEventKind = 'receipt' | 'inbound';

/**
 * Why a dead letter died: 'transient' for the failures SPEC "Events" point 5 retries (network,
 * timeout, 404, 408, 5xx) and a circuit-open fast fail; 'permanent' for any other answer. Only
 * transient dead letters are redriven automatically.
 */
export type DeadReason = 'transient' | 'permanent';

export interface NewOutboxRow {
  /** Default 'receipt'. */
  kind?: OutboxEventKind;
  clientId: number;
  recipientId: number | null;
  body: string;
  nowMs: number;
}

/** A due event with what is needed to send it, read from the client row at send time. */
export interface DueOutboxRow {
  id: number;
  /**
   * The event's identity, stable across retries, redrives and replays (sent as X-Event-Id). Null
   * only for a row inserted without one; the sender gives it one (assignEventId) before sending.
   */
  eventId: string | null;
  kind: OutboxEventKind;
  clientId: number;
  recipientId: number | null;
  body: string;
  attempts: number;
  /** When the event was queued (the receipt's commit), ms since epoch. */
  createdAt: number;
  webhookUrl: string | null;
  webhookSecretEnc: string | null;
}

export interface DeadLetterRow {
  id: number;
  /** Null only for an event inserted without one that died before its first request. */
  eventId: string | null;
  clientId: number;
  clientName: string;
  recipientId: number | null;
  body: string;
  attempts: number;
  lastError: string | null;
  deadReason: DeadReason | null;
  createdAt: number;
  deadAt: number | null;
}

/** The result of one attempt, as written back. */
export type AttemptRecord =
  | { id: number; kind: 'delivered'; attempts: number; atMs: number }
  | { id: number; kind: 'retry'; attempts: number; nextAttemptAt: number; lastError: string }
  | { id: number; kind: 'dead'; attempts: number; atMs: number; lastError: string; reason: DeadReason; url: string | null };

/** One client endpoint (the URL its events are sent to) with dead letters that may be redriven. */
export interface RedriveEndpoint {
  clientId: number;
  url: string;
}

/** Which dead letters are redriven: transient ones created, and dead, at or after cutoffMs. */
export interface RedriveFilter extends RedriveEndpoint {
  cutoffMs: number;
}

/**
 * The webhook sender thread's own connection (src/webhooks/sender-worker.ts) to a database the
 * gateway has opened and migrated: WAL lets it read the outbox while the gateway writes. It writes
 * only the sender's rare rows (a missing event id, redrive), waiting up to busyTimeoutMs for the lock.
 */
export function openSenderConnection(path: string, busyTimeoutMs: number): SqliteDatabase {
  // fileMustExist: the gateway made the file; one gone by now was deleted, and must not come back empty.
  const db = new Database(path, { timeout: busyTimeoutMs, fileMustExist: true });
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  db.pragma('foreign_keys = ON');
  return db;
}

/** What the sender reads of a due event: the row, and its client's URL and secret as they are now (join `c`). */
export const DUE_COLUMNS = `SELECT o.id, o.event_id AS eventId, o.kind, o.client_id AS clientId, o.recipient_id AS recipientId, o.body, o.attempts, o.created_at AS createdAt,
              CASE o.kind WHEN 'inbound' THEN c.inbound_webhook_url ELSE c.webhook_url END AS webhookUrl,
              c.webhook_secret_enc AS webhookSecretEnc`;

/**
 * Every due pending event, oldest due first: the partial index webhook_outbox_due from its start,
 * in the order asked (SEARCH o USING INDEX webhook_outbox_due (next_attempt_at<?); SEARCH c USING
 * INTEGER PRIMARY KEY). What finds retries, redrives and replays, whose ids are old.
 */
export const DUE_SQL = `${DUE_COLUMNS}
       FROM webhook_outbox o JOIN clients c ON c.id = o.client_id
       WHERE o.state = 'pending' AND o.next_attempt_at <= ?
       ORDER BY o.next_attempt_at, o.id LIMIT ?`;

/**
 * The deliveries of a batch that took the same number of attempts, in one statement: their ids as
 * a JSON array, each row found by its id (SEARCH webhook_outbox USING INTEGER PRIMARY KEY (rowid=?),
 * LIST SUBQUERY over json_each). Cheaper than one UPDATE a row (about 3 against 5 us a row on this
 * machine, commits included) where an UPDATE ... FROM json_each of [id, attempts, time] is not. The
 * unary + on state keeps that plan on an ANALYZEd file, where the planner otherwise walks every
 * pending row of webhook_outbox_due. A row no longer pending (replayed, or changed by another
 * process) is left alone.
 */
export const DELIVERED_SQL = `UPDATE webhook_outbox SET state = 'delivered', attempts = ?, delivered_at = ?
       WHERE id IN (SELECT value FROM json_each(?)) AND +state = 'pending'`;

/** A dead letter back in the queue as a fresh series: pending, no attempts, due at the first parameter. */
const REQUEUE_SET = `state = 'pending', attempts = 0, next_attempt_at = ?, last_error = NULL, dead_at = NULL, dead_reason = NULL, dead_url = NULL`;

function prepareStatements(db: SqliteDatabase) {
  return {
    // Only clients with a webhook URL get events: one that configured none has not subscribed.
    insert: db.prepare<[number, number | null, string, number, number, string, number]>(
      `INSERT INTO webhook_outbox (client_id, recipient_id, body, state, attempts, next_attempt_at, created_at, event_id)
       SELECT ?, ?, ?, 'pending', 0, ?, ?, ? FROM clients WHERE id = ? AND webhook_url IS NOT NULL AND webhook_url <> ''`,
    ),
    insertInbound: db.prepare<[number, string, number, number, string, number]>(
      `INSERT INTO webhook_outbox (kind, client_id, recipient_id, body, state, attempts, next_attempt_at, created_at, event_id)
       SELECT 'inbound', ?, NULL, ?, 'pending', 0, ?, ?, ? FROM clients WHERE id = ? AND inbound_webhook_url IS NOT NULL AND inbound_webhook_url <> ''`,
    ),
    due: db.prepare<[number, number]>(DUE_SQL),
    earliestPending: db.prepare<[]>(`SELECT MIN(next_attempt_at) FROM webhook_outbox WHERE state = 'pending'`).pluck(),
    delivered: db.prepare<[number, number, string]>(DELIVERED_SQL),
    retry: db.prepare<[number, number, string, number]>(
      `UPDATE webhook_outbox SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE id = ? AND state = 'pending'`,
    ),
    dead: db.prepare<[number, number, string, DeadReason, string | null, number]>(
      `UPDATE webhook_outbox SET state = 'dead', attempts = ?, dead_at = ?, last_error = ?, dead_reason = ?, dead_url = ?
       WHERE id = ? AND state = 'pending'`,
    ),
    // Redrive: each redriven event starts a fresh series, as a replay does.
    redrive: db.prepare<[number, number, string, number, number]>(
      `UPDATE webhook_outbox SET ${REQUEUE_SET}
       WHERE state = 'dead' AND dead_reason = 'transient' AND client_id = ? AND dead_url = ? AND created_at >= ? AND dead_at >= ?`,
    ),
    probe: db.prepare<[number, number, string, number, number]>(
      `UPDATE webhook_outbox SET ${REQUEUE_SET}
       WHERE id = (SELECT id FROM webhook_outbox
                   WHERE state = 'dead' AND dead_reason = 'transient' AND client_id = ? AND dead_url = ? AND created_at >= ? AND dead_at >= ?
                   ORDER BY id LIMIT 1)
       RETURNING id`,
    ).pluck(),
    redriveEndpoints: db.prepare<[number, number]>(
      `SELECT DISTINCT client_id AS clientId, dead_url AS url FROM webhook_outbox
       WHERE state = 'dead' AND dead_reason = 'transient' AND dead_url IS NOT NULL AND created_at >= ? AND dead_at >= ?`,
    ),
    assignEventId: db.prepare<[string, number]>(`UPDATE webhook_outbox SET event_id = ? WHERE id = ? AND event_id IS NULL`),
    eventIdOf: db.prepare<[number]>(`SELECT event_id FROM webhook_outbox WHERE id = ?`).pluck(),
    countByState: db.prepare<[]>(`SELECT state, COUNT(*) AS n FROM webhook_outbox GROUP BY state`),
    statesOf: db.prepare<[string]>(`SELECT state FROM webhook_outbox WHERE id IN (SELECT value FROM json_each(?))`).pluck(),
  };
}

type Statements = ReturnType<typeof prepareStatements>;
const statementsByDb = new WeakMap<SqliteDatabase, Statements>();

function statements(db: SqliteDatabase): Statements {
  let s = statementsByDb.get(db);
  if (s === undefined) {
    s = prepareStatements(db);
    statementsByDb.set(db, s);
  }
  return s;
}

/**
 * Inserts a pending event due now, with a new event id (a random UUID: the event's identity for
 * receivers, never reused); false when the client has no URL for the event's kind (nothing to send to).
 */
export function insertOutboxRow(db: SqliteDatabase, row: NewOutboxRow): boolean {
  if (row.kind === 'inbound') return statements(db).insertInbound.run(row.clientId, row.body, row.nowMs, row.nowMs, randomUUID(), row.clientId).changes === 1;
  return statements(db).insert.run(row.clientId, row.recipientId, row.body, row.nowMs, row.nowMs, randomUUID(), row.clientId).changes === 1;
}

/** The multi-row outbox insert of each connection, prepared on first use. */
const outboxInsertsByDb = new WeakMap<SqliteDatabase, MultiRowInsert<Omit<NewOutboxRow, 'kind'>>>();

function outboxInsertsFor(db: SqliteDatabase): MultiRowInsert<Omit<NewOutboxRow, 'kind'>> {
  let inserts = outboxInsertsByDb.get(db);
  if (inserts === undefined) {
    inserts = new MultiRowInsert(db,
      'INSERT INTO webhook_outbox (client_id, recipient_id, body, state, attempts, next_attempt_at, created_at, event_id) VALUES',
      `(?, ?, ?, 'pending', 0, ?, ?, ?)`,
      (r) => [r.clientId, r.recipientId, r.body, r.nowMs, r.nowMs, randomUUID()]);
    outboxInsertsByDb.set(db, inserts);
  }
  return inserts;
}

/**
 * Inserts delivery-receipt events due now, each with a new event id, with multi-row INSERTs: the
 * engine's batch of receipts queues its webhooks in one or a few statements. Unlike insertOutboxRow
 * it does not look the client up: the caller read in the same transaction that the client has a
 * webhook URL (kind 'receipt' only).
 */
export function insertOutboxRows(db: SqliteDatabase, rows: readonly Omit<NewOutboxRow, 'kind'>[]): void {
  outboxInsertsFor(db).run(rows);
}

export function selectDueOutboxRows(db: SqliteDatabase, nowMs: number, maxRows: number): DueOutboxRow[] {
  return statements(db).due.all(nowMs, maxRows) as DueOutboxRow[];
}

/** The soonest next_attempt_at of any pending event, or null when none is pending. */
export function earliestPendingAttemptAt(db: SqliteDatabase): number | null {
  return (statements(db).earliestPending.get() as number | null | undefined) ?? null;
}

/**
 * Writes attempt results in one transaction: the deliveries as one statement per attempt count
 * (DELIVERED_SQL), a retry or dead letter (rare) one each. A row no longer pending (replayed or changed) is left alone.
 *
 * The commit does not wait for the disk (commitWithoutOwnSync: synchronous NORMAL for this transaction only, WAL mode): a
 * result lost to a power cut leaves its row pending, so the event is sent again, which the spec allows
 * (SPEC "Events" point 8). The next FULL commit of the connection syncs these frames too. Waiting for
 * the disk here would cost one sync per batch on the hot path of every webhook.
 */
export function recordAttempts(db: SqliteDatabase, records: readonly AttemptRecord[]): void {
  const s = statements(db);
  commitWithoutOwnSync(db, () => db.transaction(() => {
    // Nearly every result: one statement for the batch's deliveries of each attempt count (one,
    // nearly always), not one a webhook. Each is stamped with the latest answer of its group,
    // at most a batch (the sender's flush interval) after its own.
    const delivered = new Map<number, { ids: number[]; atMs: number }>();
    for (const r of records) {
      if (r.kind === 'delivered') {
        const group = delivered.get(r.attempts);
        if (group === undefined) delivered.set(r.attempts, { ids: [r.id], atMs: r.atMs });
        else {
          group.ids.push(r.id);
          if (r.atMs > group.atMs) group.atMs = r.atMs;
        }
      } else if (r.kind === 'retry') s.retry.run(r.attempts, r.nextAttemptAt, r.lastError, r.id);
      else s.dead.run(r.attempts, r.atMs, r.lastError, r.reason, r.url, r.id);
    }
    for (const [attempts, { ids, atMs }] of delivered) s.delivered.run(attempts, atMs, JSON.stringify(ids));
  })());
}

/**
 * Gives a row inserted without an event id a new one, once: a second call (or another process) does
 * not replace it. Returns the row's event id.
 */
export function assignEventId(db: SqliteDatabase, id: number): string {
  const s = statements(db);
  s.assignEventId.run(randomUUID(), id);
  return s.eventIdOf.get(id) as string;
}

/**
 * Re-queues the endpoint's redrivable dead letters as fresh series due at nowMs; returns how many.
 * A row is redrivable when it died of a transient failure at this client and URL, and was created
 * (so also died) at or after cutoffMs.
 */
export function redriveDeadLetters(db: SqliteDatabase, filter: RedriveFilter, nowMs: number): number {
  return statements(db).redrive.run(nowMs, filter.clientId, filter.url, filter.cutoffMs, filter.cutoffMs).changes;
}

/**
 * Re-queues the endpoint's oldest redrivable dead letter alone, as the probe of the endpoint; returns
 * its id, or null when the endpoint has none left.
 */
export function requeueProbe(db: SqliteDatabase, filter: RedriveFilter, nowMs: number): number | null {
  return (statements(db).probe.get(nowMs, filter.clientId, filter.url, filter.cutoffMs, filter.cutoffMs) as number | undefined) ?? null;
}

/** Every endpoint that has redrivable dead letters (read when the sender starts). */
export function listRedriveEndpoints(db: SqliteDatabase, cutoffMs: number): RedriveEndpoint[] {
  return statements(db).redriveEndpoints.all(cutoffMs, cutoffMs) as RedriveEndpoint[];
}

/** The states of the outbox rows `ids` (rows that no longer exist are left out). */
export function outboxStatesOf(db: SqliteDatabase, ids: readonly number[]): OutboxState[] {
  return statements(db).statesOf.all(JSON.stringify(ids)) as OutboxState[];
}

export function countOutboxByState(db: SqliteDatabase): Record<OutboxState, number> {
  const counts: Record<OutboxState, number> = { pending: 0, delivered: 0, dead: 0 };
  for (const row of statements(db).countByState.all() as { state: OutboxState; n: number }[]) counts[row.state] = row.n;
  return counts;
}

export interface DeadLetterFilter {
  clientId?: number;
  /** Only events that became dead letters at or after this time (ms since epoch). */
  sinceMs?: number;
  maxRows?: number;
}

function deadLetterWhere(filter: DeadLetterFilter): { where: string; params: number[] } {
  const clauses = [`o.state = 'dead'`];
  const params: number[] = [];
  if (filter.clientId !== undefined) {
    clauses.push('o.client_id = ?');
    params.push(filter.clientId);
  }
  if (filter.sinceMs !== undefined) {
    clauses.push('o.dead_at >= ?');
    params.push(filter.sinceMs);
  }
  return { where: clauses.join(' AND '), params };
}

/** Dead letters, oldest first. Admin path: not prepared once, the filter varies. */
export function listDeadLetters(db: SqliteDatabase, filter: DeadLetterFilter = {}): DeadLetterRow[] {
  const { where, params } = deadLetterWhere(filter);
  const limit = filter.maxRows === undefined ? '' : ` LIMIT ${Math.max(0, Math.trunc(filter.maxRows))}`;
  return db.prepare(
    `SELECT o.id, o.event_id AS eventId, o.client_id AS clientId, c.name AS clientName, o.recipient_id AS recipientId, o.body,
            o.attempts, o.last_error AS lastError, o.dead_reason AS deadReason, o.created_at AS createdAt, o.dead_at AS deadAt
     FROM webhook_outbox o JOIN clients c ON c.id = o.client_id
     WHERE ${where} ORDER BY o.dead_at, o.id${limit}`,
  ).all(...params) as DeadLetterRow[];
}

/**
 * Puts dead letters back in the queue as new events: pending, no attempts, due now. The stored body
 * and event id are unchanged, so the replayed request carries the same bytes, signature and
 * X-Event-Id as the first one.
 * Returns the ids re-queued.
 */
export function requeueDeadLetters(db: SqliteDatabase, filter: Omit<DeadLetterFilter, 'maxRows'>, nowMs: number): number[] {
  const { where, params } = deadLetterWhere(filter);
  return db.transaction(() => {
    const ids = db.prepare(`SELECT o.id FROM webhook_outbox o WHERE ${where} ORDER BY o.id`).pluck().all(...params) as number[];
    const requeue = db.prepare(`UPDATE webhook_outbox SET ${REQUEUE_SET} WHERE id = ? AND state = 'dead'`);
    for (const id of ids) requeue.run(nowMs, id);
    return ids;
  })();
}
