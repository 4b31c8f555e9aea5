/**
 * WebhookStore (src/store/sqlite/webhook-store.ts as a class: the functions minus `db`) on PostgreSQL,
 * plus claimDueOutboxRows, the lease that lets several nodes share one outbox:
 * on the stamp columns webhook_outbox.leased_by / lease_until when the caller passes its node id.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type {
  AttemptRecord, DeadLetterFilter, DeadLetterRow, DueOutboxRow, NewOutboxRow, OutboxState, RedriveEndpoint, RedriveFilter,
} from '../sqlite/webhook-store.js';
import type { WebhookStorePort } from '../webhook-store-port.js';
import { changes, inTransaction, row, rows, type PgPool, type PgQueryable } from './pool.js';
import type { WakeChannel } from './wakeups.js';

const OUTBOX_CHANNEL: WakeChannel = 'smsgate_outbox';

/**
 * An insert of outbox rows that also wakes every node's sender (PgWakeups on smsgate_outbox) when
 * it inserted any: the statement returns one row, the notification, when it did and none when it
 * did not (so its row count says whether a row went in). PostgreSQL delivers a notification at the
 * commit, and folds the same channel and payload notified again within one transaction into one:
 * a unit queuing a hundred receipts' webhooks, a statement each, wakes the peers once, after they
 * can see the rows. Cheaper than a trigger (no function call per statement, no migration): the
 * notification rides on the insert's own round trip.
 */
function notifyingInsert(insert: string): string {
  return `WITH inserted AS (${insert} RETURNING 1)
    SELECT pg_notify('${OUTBOX_CHANNEL}', '') FROM (SELECT 1 FROM inserted LIMIT 1) AS any_inserted`;
}

/** A dead letter back in the queue as a fresh series: pending, no attempts, due at $1. */
const REQUEUE_SET = `state = 'pending', attempts = 0, next_attempt_at = $1, last_error = NULL, dead_at = NULL, dead_reason = NULL, dead_url = NULL,
  leased_by = NULL, lease_until = NULL`;

const DUE_COLUMNS = `o.id, o.event_id AS "eventId", o.kind, o.client_id AS "clientId", o.recipient_id AS "recipientId", o.body, o.attempts,
  o.created_at AS "createdAt", CASE o.kind WHEN 'inbound' THEN c.inbound_webhook_url ELSE c.webhook_url END AS "webhookUrl",
  c.webhook_secret_enc AS "webhookSecretEnc"`;

/** Pending, due at $1 and not under a live lease. */
const DUE_NOW = `state = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until < $1)`;

/** An attempt's outcome ends its lease. */
const RELEASE = 'leased_by = NULL, lease_until = NULL';

/** The guard of an attempt-result write: still pending, and with a node id still leased to it (parameter $n). */
function held(n: number, nodeId: string | undefined): string {
  return nodeId === undefined ? `state = 'pending'` : `state = 'pending' AND leased_by = $${n}`;
}

function fenced(params: (string | number | null)[], nodeId: string | undefined): (string | number | null)[] {
  return nodeId === undefined ? params : [...params, nodeId];
}

/** What claimProbe did: leased the probe to the caller, found none to send, or found one already out. */
export type ProbeClaim = { kind: 'claimed'; row: DueOutboxRow } | { kind: 'none-left' } | { kind: 'in-flight' };

/** pg_advisory_xact_lock's first key for a redrive probe's endpoint lock (the second is the endpoint's hash): "smsw". */
const REDRIVE_LOCK_SPACE = 0x736d7377;

/** The redrivable dead letters of one endpoint: $2 client, $3 url, $4 cutoff. */
const REDRIVABLE = `state = 'dead' AND dead_reason = 'transient' AND client_id = $2 AND dead_url = $3 AND created_at >= $4 AND dead_at >= $4`;

/** The rows of a named (prepared once per connection) statement: the sender's hot statements. */
async function named<Row extends pg.QueryResultRow>(db: PgQueryable, name: string, text: string, values: readonly unknown[]): Promise<Row[]> {
  return (await db.query<Row>({ name, text, values: values as unknown[] })).rows;
}

function deadLetterWhere(filter: DeadLetterFilter, firstParam: number): { where: string; params: number[] } {
  const clauses = [`o.state = 'dead'`];
  const params: number[] = [];
  if (filter.clientId !== undefined) {
    params.push(filter.clientId);
    clauses.push(`o.client_id = $${firstParam + params.length - 1}`);
  }
  if (filter.sinceMs !== undefined) {
    params.push(filter.sinceMs);
    clauses.push(`o.dead_at >= $${firstParam + params.length - 1}`);
  }
  return { where: clauses.join(' AND '), params };
}

export class PgWebhookStore implements WebhookStorePort {
  constructor(private readonly pool: PgPool) {}

  /** A pending event due now with a new event id; false when the client has no URL for its kind. */
  insertOutboxRow(r: NewOutboxRow): Promise<boolean> {
    return insertOutboxRow(this.pool, r);
  }

  /**
   * Delivery-receipt events due now, each with a new event id, in one statement: the engine's batch
   * of receipts queues its webhooks at once. As on SQLite (h-perf) it does not look the client up:
   * the caller read in the same unit that the client has a webhook URL.
   */
  insertOutboxRows(outbox: readonly Omit<NewOutboxRow, 'kind'>[]): Promise<void> {
    return insertOutboxRows(this.pool, outbox);
  }

  selectDueOutboxRows(nowMs: number, maxRows: number): Promise<DueOutboxRow[]> {
    return rows<DueOutboxRow>(this.pool,
      `SELECT ${DUE_COLUMNS} FROM webhook_outbox o JOIN clients c ON c.id = o.client_id
       WHERE o.state = 'pending' AND o.next_attempt_at <= $1 AND (o.lease_until IS NULL OR o.lease_until < $1) ORDER BY o.next_attempt_at, o.id LIMIT $2`, [nowMs, maxRows]);
  }

  /**
   * Due events taken for one attempt, selected FOR UPDATE SKIP LOCKED so concurrent claimers never
   * take the same event nor wait for each other. An event is due when pending,
   * next_attempt_at <= nowMs and not under a live lease (lease_until NULL or < nowMs).
   *
   * With a node id (a cluster) the lease is the stamp columns: leased_by = nodeId, lease_until =
   * nowMs + leaseMs, next_attempt_at untouched. The attempt's outcome (recordAttempts with the same
   * node id) is written only while that lease is the node's, and clears it. A node that dies holding
   * leases has them cleared by the reap (requeueExpiredNodes), and its events are due again at
   * once; a lease that merely lapses makes its event due again then (at-least-once, SPEC "Events"
   * point 8).
   *
   * Without a node id (one gateway, as before) the lease moves next_attempt_at to nowMs + leaseMs.
   */
  async claimDueOutboxRows(nowMs: number, maxRows: number, leaseMs: number, nodeId?: string): Promise<DueOutboxRow[]> {
    const set = nodeId === undefined ? 'next_attempt_at = $3' : 'leased_by = $4, lease_until = $3';
    // A named statement: planned once per connection, not at every claim (planning took longer than
    // running it, 2 ms against 1.4 ms for 64 rows; the sender claims every few ms under load).
    const claimed = await named<DueOutboxRow & { due: number }>(this.pool, nodeId === undefined ? 'smsgate_outbox_claim' : 'smsgate_outbox_claim_leased',
      `WITH picked AS (
         SELECT id, next_attempt_at FROM webhook_outbox WHERE ${DUE_NOW}
         ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
       )
       UPDATE webhook_outbox o SET ${set}
       FROM picked, clients c WHERE o.id = picked.id AND c.id = o.client_id
       RETURNING ${DUE_COLUMNS}, picked.next_attempt_at AS due`,
      nodeId === undefined ? [nowMs, maxRows, nowMs + leaseMs] : [nowMs, maxRows, nowMs + leaseMs, nodeId]);
    claimed.sort((a, b) => a.due - b.due || a.id - b.id);
    return claimed.map(({ due: _due, ...r }) => r);
  }

  /** When the next event falls due: its next_attempt_at, or just after its lease if that ends later. */
  async earliestPendingAttemptAt(): Promise<number | null> {
    return (await row<{ at: number | null }>(this.pool,
      `SELECT MIN(CASE WHEN lease_until >= next_attempt_at THEN lease_until + 1 ELSE next_attempt_at END) AS at
       FROM webhook_outbox WHERE state = 'pending'`))?.at ?? null;
  }

  /**
   * Attempt results in one transaction; a row no longer pending (replayed or changed) is left alone.
   * With a node id, fenced on the lease: a result is written only while the row is leased to that
   * node (claimDueOutboxRows with the same id), and the write releases the lease; a node whose lease
   * was reaped (or replaced by another node's after it lapsed) changes nothing.
   */
  recordAttempts(records: readonly AttemptRecord[], nodeId?: string): Promise<void> {
    return inTransaction(this.pool, async (client) => {
      // A result lost with an asynchronous commit leaves its row pending: sent again, as the spec allows.
      await client.query('SET LOCAL synchronous_commit = off');
      for (const r of records) {
        if (r.kind === 'delivered') {
          await changes(client, `UPDATE webhook_outbox SET state = 'delivered', attempts = $1, delivered_at = $2, ${RELEASE} WHERE id = $3 AND ${held(4, nodeId)}`,
            fenced([r.attempts, r.atMs, r.id], nodeId));
        } else if (r.kind === 'retry') {
          await changes(client, `UPDATE webhook_outbox SET attempts = $1, next_attempt_at = $2, last_error = $3, ${RELEASE} WHERE id = $4 AND ${held(5, nodeId)}`,
            fenced([r.attempts, r.nextAttemptAt, r.lastError, r.id], nodeId));
        } else {
          await changes(client,
            `UPDATE webhook_outbox SET state = 'dead', attempts = $1, dead_at = $2, last_error = $3, dead_reason = $4, dead_url = $5, ${RELEASE}
             WHERE id = $6 AND ${held(7, nodeId)}`, fenced([r.attempts, r.atMs, r.lastError, r.reason, r.url, r.id], nodeId));
        }
      }
    });
  }

  /**
   * The sender's fenced write: recordAttempts with a node id, as one statement for
   * the whole batch (a round trip per result would bound a node's webhooks/s by the database's
   * latency). Returns the ids whose result was refused because the row is no longer leased to
   * nodeId (reaped when the node expired, or taken by another node after the lease lapsed) or no
   * longer pending: those rows are left exactly as they were. A written result also clears dead_url
   * unless it is a dead letter's (the probe marker, see claimProbe).
   */
  async recordLeasedAttempts(records: readonly AttemptRecord[], nodeId: string): Promise<number[]> {
    if (records.length === 0) return [];
    // One statement, one round trip, named so it is planned once per connection. A result lost with
    // an asynchronous commit leaves its row pending: sent again, as the spec allows; set_config(...,
    // true) is SET LOCAL for the statement's own transaction.
    const written = await named<{ id: number }>(this.pool, 'smsgate_outbox_record_leased',
      `WITH async_commit AS (SELECT set_config('synchronous_commit', 'off', true))
       UPDATE webhook_outbox o SET
         state = r.state, attempts = r.attempts,
         delivered_at = CASE WHEN r.state = 'delivered' THEN r.at ELSE o.delivered_at END,
         next_attempt_at = COALESCE(r.next_at, o.next_attempt_at),
         last_error = CASE WHEN r.state = 'delivered' THEN o.last_error ELSE r.last_error END,
         dead_at = CASE WHEN r.state = 'dead' THEN r.at ELSE o.dead_at END,
         dead_reason = CASE WHEN r.state = 'dead' THEN r.reason ELSE o.dead_reason END,
         dead_url = CASE WHEN r.state = 'dead' THEN r.url ELSE NULL END,
         ${RELEASE}
       FROM async_commit, unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::text[], $8::text[])
         AS r(id, state, attempts, at, next_at, last_error, reason, url)
       WHERE o.id = r.id AND o.state = 'pending' AND o.leased_by = $9
       RETURNING o.id`,
      [records.map((r) => r.id),
        records.map((r) => (r.kind === 'retry' ? 'pending' : r.kind)),
        records.map((r) => r.attempts),
        records.map((r) => (r.kind === 'retry' ? null : r.atMs)),
        records.map((r) => (r.kind === 'retry' ? r.nextAttemptAt : null)),
        records.map((r) => (r.kind === 'delivered' ? null : r.lastError)),
        records.map((r) => (r.kind === 'dead' ? r.reason : null)),
        records.map((r) => (r.kind === 'dead' ? r.url : null)),
        nodeId]);
    const writtenIds = new Set(written.map((r) => r.id));
    return records.filter((r) => !writtenIds.has(r.id)).map((r) => r.id);
  }

  /**
   * The redrive probe of one endpoint, cluster-wide: re-queues the endpoint's
   * oldest redrivable dead letter and leases it to nodeId in the same unit, so the node that probes
   * is the node that sends it and learns the answer. The probe row keeps its dead_url while pending
   * (the marker; its result clears it): while one is out, another node's probe of the endpoint
   * answers 'in-flight' instead of sending a second. An advisory transaction lock on the endpoint
   * makes the check and the requeue one step for nodes probing at the same moment.
   */
  async claimProbe(filter: RedriveFilter, nowMs: number, leaseMs: number, nodeId: string): Promise<ProbeClaim> {
    return inTransaction(this.pool, async (client) => {
      await client.query(`SELECT pg_advisory_xact_lock(${REDRIVE_LOCK_SPACE}, hashtext($1::bigint || ' ' || $2::text))`, [filter.clientId, filter.url]);
      const out = await row<{ id: number }>(client,
        `SELECT id FROM webhook_outbox WHERE state = 'pending' AND client_id = $1 AND dead_url = $2 LIMIT 1`, [filter.clientId, filter.url]);
      if (out !== undefined) return { kind: 'in-flight' };
      const probed = await row<DueOutboxRow>(client,
        `UPDATE webhook_outbox o SET state = 'pending', attempts = 0, next_attempt_at = $1, last_error = NULL, dead_at = NULL, dead_reason = NULL,
           leased_by = $6, lease_until = $5
         FROM clients c
         WHERE c.id = o.client_id AND o.id = (SELECT id FROM webhook_outbox WHERE ${REDRIVABLE} ORDER BY id LIMIT 1 FOR UPDATE)
         RETURNING ${DUE_COLUMNS}`, [nowMs, filter.clientId, filter.url, filter.cutoffMs, nowMs + leaseMs, nodeId]);
      return probed === undefined ? { kind: 'none-left' } : { kind: 'claimed', row: probed };
    });
  }

  /** Ends nodeId's leases of rows it claimed and will not send (it is stopping): any node may take them at once. */
  async releaseLeases(ids: readonly number[], nodeId: string): Promise<void> {
    if (ids.length === 0) return;
    await changes(this.pool, `UPDATE webhook_outbox SET ${RELEASE} WHERE id = ANY($1::bigint[]) AND state = 'pending' AND leased_by = $2`, [ids, nodeId]);
  }

  /** Gives a row without an event id a new one, once (a second call keeps the first); returns it. */
  async assignEventId(id: number): Promise<string> {
    const found = await row<{ event_id: string }>(this.pool,
      `WITH set AS (UPDATE webhook_outbox SET event_id = $1 WHERE id = $2 AND event_id IS NULL RETURNING event_id)
       SELECT event_id FROM set UNION ALL SELECT event_id FROM webhook_outbox WHERE id = $2 AND NOT EXISTS (SELECT 1 FROM set)`,
      [randomUUID(), id]);
    return found!.event_id;
  }

  redriveDeadLetters(filter: RedriveFilter, nowMs: number): Promise<number> {
    return changes(this.pool, `UPDATE webhook_outbox SET ${REQUEUE_SET} WHERE ${REDRIVABLE}`, [nowMs, filter.clientId, filter.url, filter.cutoffMs]);
  }

  async requeueProbe(filter: RedriveFilter, nowMs: number): Promise<number | null> {
    const probed = await row<{ id: number }>(this.pool,
      `UPDATE webhook_outbox SET ${REQUEUE_SET}
       WHERE id = (SELECT id FROM webhook_outbox WHERE ${REDRIVABLE} ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING id`, [nowMs, filter.clientId, filter.url, filter.cutoffMs]);
    return probed?.id ?? null;
  }

  listRedriveEndpoints(cutoffMs: number): Promise<RedriveEndpoint[]> {
    return rows<RedriveEndpoint>(this.pool,
      `SELECT DISTINCT client_id AS "clientId", dead_url AS url FROM webhook_outbox
       WHERE state = 'dead' AND dead_reason = 'transient' AND dead_url IS NOT NULL AND created_at >= $1 AND dead_at >= $1`, [cutoffMs]);
  }

  async outboxStatesOf(ids: readonly number[]): Promise<OutboxState[]> {
    return (await rows<{ state: OutboxState }>(this.pool, 'SELECT state FROM webhook_outbox WHERE id = ANY($1::bigint[])', [ids])).map((r) => r.state);
  }

  async countOutboxByState(): Promise<Record<OutboxState, number>> {
    const counts: Record<OutboxState, number> = { pending: 0, delivered: 0, dead: 0 };
    for (const r of await rows<{ state: OutboxState; n: number }>(this.pool, 'SELECT state, COUNT(*) AS n FROM webhook_outbox GROUP BY state')) {
      counts[r.state] = r.n;
    }
    return counts;
  }

  /** Dead letters, oldest first. */
  listDeadLetters(filter: DeadLetterFilter = {}): Promise<DeadLetterRow[]> {
    const { where, params } = deadLetterWhere(filter, 1);
    const limit = filter.maxRows === undefined ? '' : ` LIMIT ${Math.max(0, Math.trunc(filter.maxRows))}`;
    return rows<DeadLetterRow>(this.pool,
      `SELECT o.id, o.event_id AS "eventId", o.client_id AS "clientId", c.name AS "clientName", o.recipient_id AS "recipientId", o.body,
              o.attempts, o.last_error AS "lastError", o.dead_reason AS "deadReason", o.created_at AS "createdAt", o.dead_at AS "deadAt"
       FROM webhook_outbox o JOIN clients c ON c.id = o.client_id
       WHERE ${where} ORDER BY o.dead_at, o.id${limit}`, params);
  }

  /** Dead letters back in the queue as new events due now, body and event id unchanged; the ids, ascending. */
  async requeueDeadLetters(filter: Omit<DeadLetterFilter, 'maxRows'>, nowMs: number): Promise<number[]> {
    const { where, params } = deadLetterWhere(filter, 2);
    const requeued = await rows<{ id: number }>(this.pool,
      `UPDATE webhook_outbox SET ${REQUEUE_SET} WHERE id IN (SELECT o.id FROM webhook_outbox o WHERE ${where}) AND state = 'dead' RETURNING id`,
      [nowMs, ...params]);
    return requeued.map((r) => r.id).sort((a, b) => a - b);
  }
}

/**
 * Inserts a pending event due now with a new event id (a random UUID, never reused); false when the
 * client has no URL for the event's kind. A function too, so another store's unit (an inbound
 * arrival, the engine's receipts) queues its webhook inside its own transaction; the peers' senders
 * are woken when that transaction commits (notifyingInsert).
 */
export async function insertOutboxRow(db: PgQueryable, r: NewOutboxRow): Promise<boolean> {
  const inserted = r.kind === 'inbound'
    ? await changes(db, notifyingInsert(
      `INSERT INTO webhook_outbox (kind, client_id, recipient_id, body, state, attempts, next_attempt_at, created_at, event_id)
       SELECT 'inbound', id, NULL, $2::text, 'pending', 0, $3::bigint, $3::bigint, $4::text FROM clients
       WHERE id = $1 AND inbound_webhook_url IS NOT NULL AND inbound_webhook_url <> ''`),
      [r.clientId, r.body, r.nowMs, randomUUID()])
    : await changes(db, notifyingInsert(
      `INSERT INTO webhook_outbox (client_id, recipient_id, body, state, attempts, next_attempt_at, created_at, event_id)
       SELECT id, $2::bigint, $3::text, 'pending', 0, $4::bigint, $4::bigint, $5::text FROM clients
       WHERE id = $1 AND webhook_url IS NOT NULL AND webhook_url <> ''`),
      [r.clientId, r.recipientId, r.body, r.nowMs, randomUUID()]);
  return inserted === 1;
}

/**
 * Delivery-receipt events, each due at its nowMs with a new event id, in one statement (the engine's
 * batch of receipts, outcomes or materialised NO_ROUTE recipients queues its webhooks at once), on
 * the caller's connection so it commits with the caller's unit. It does not look the client up: the
 * caller read in the same unit that the client has a webhook URL. Wakes the peers' senders at the
 * commit (notifyingInsert).
 */
export async function insertOutboxRows(db: PgQueryable, outbox: readonly Omit<NewOutboxRow, 'kind'>[]): Promise<void> {
  if (outbox.length === 0) return;
  await changes(db, notifyingInsert(
    `INSERT INTO webhook_outbox (client_id, recipient_id, body, state, attempts, next_attempt_at, created_at, event_id)
     SELECT client_id, recipient_id, body, 'pending', 0, due, due, event_id
     FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::text[]) WITH ORDINALITY AS t(client_id, recipient_id, body, due, event_id, n)
     ORDER BY n`),
    [outbox.map((r) => r.clientId), outbox.map((r) => r.recipientId), outbox.map((r) => r.body), outbox.map((r) => r.nowMs), outbox.map(() => randomUUID())]);
}
