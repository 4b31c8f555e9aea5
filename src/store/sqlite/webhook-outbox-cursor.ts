/**
 * The webhook sender's reads of a SQLite outbox that skip what it already holds: the due events
 * queued since its last read (from a cursor on id), or every due event but those it holds. Apart
 * from webhook-store.ts because they are SQLite's alone: the PostgreSQL outbox leases its rows, so
 * a node never reads again what it holds.
 */
import type { SqliteDatabase } from './database.js';
import { DUE_COLUMNS, type DueOutboxRow } from './webhook-store.js';

/**
 * The due pending events after id `?`, in id order: each row the engine queued since the last read,
 * read once, by the primary key from the cursor (SEARCH o USING INTEGER PRIMARY KEY (rowid>?)),
 * rather than the due index from its start past every row the sender already holds. The unary +
 * on state keeps that plan whatever statistics say (an ANALYZEd file can otherwise make the planner
 * prefer webhook_outbox_due, and sort).
 */
export const DUE_AFTER_SQL = `${DUE_COLUMNS}
       FROM webhook_outbox o JOIN clients c ON c.id = o.client_id
       WHERE o.id > ? AND +o.state = 'pending' AND o.next_attempt_at <= ?
       ORDER BY o.id LIMIT ?`;

/**
 * Every due pending event but those in the JSON array `?` (the rows the sender holds: in flight or
 * awaiting their result's write), oldest due first. The held ids are skipped in the due index,
 * before the row is fetched or joined (SEARCH o USING INDEX webhook_outbox_due (next_attempt_at<?);
 * LIST SUBQUERY; CREATE BLOOM FILTER), so what the sender holds costs an index step, not a row read.
 */
export const DUE_EXCEPT_SQL = `${DUE_COLUMNS}
       FROM webhook_outbox o JOIN clients c ON c.id = o.client_id
       WHERE o.state = 'pending' AND o.next_attempt_at <= ? AND o.id NOT IN (SELECT value FROM json_each(?))
       ORDER BY o.next_attempt_at, o.id LIMIT ?`;

const statementsByDb = new WeakMap<SqliteDatabase, ReturnType<typeof prepare>>();

function prepare(db: SqliteDatabase) {
  return {
    after: db.prepare<[number, number, number]>(DUE_AFTER_SQL),
    except: db.prepare<[number, string, number]>(DUE_EXCEPT_SQL),
  };
}

function statements(db: SqliteDatabase): ReturnType<typeof prepare> {
  let s = statementsByDb.get(db);
  if (s === undefined) {
    s = prepare(db);
    statementsByDb.set(db, s);
  }
  return s;
}

/** Due pending events with an id above afterId, lowest id first, at most maxRows. */
export function selectDueOutboxRowsAfter(db: SqliteDatabase, afterId: number, nowMs: number, maxRows: number): DueOutboxRow[] {
  return statements(db).after.all(afterId, nowMs, maxRows) as DueOutboxRow[];
}

/** Due pending events, oldest due first, at most maxRows, leaving out the ids in heldIds. */
export function selectDueOutboxRowsExcept(db: SqliteDatabase, nowMs: number, maxRows: number, heldIds: Iterable<number>): DueOutboxRow[] {
  return statements(db).except.all(nowMs, JSON.stringify([...heldIds]), maxRows) as DueOutboxRow[];
}
