/**
 * The webhook sender's incremental read of a SQLite outbox: the due events queued since its last
 * read, found from a cursor on id. Apart from webhook-store.ts because it is SQLite's alone: the
 * PostgreSQL outbox leases its rows, so a node never reads again what it holds, and needs no cursor.
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

const statementsByDb = new WeakMap<SqliteDatabase, ReturnType<typeof prepare>>();

function prepare(db: SqliteDatabase) {
  return db.prepare<[number, number, number]>(DUE_AFTER_SQL);
}

/** Due pending events with an id above afterId, lowest id first, at most maxRows. */
export function selectDueOutboxRowsAfter(db: SqliteDatabase, afterId: number, nowMs: number, maxRows: number): DueOutboxRow[] {
  let statement = statementsByDb.get(db);
  if (statement === undefined) {
    statement = prepare(db);
    statementsByDb.set(db, statement);
  }
  return statement.all(afterId, nowMs, maxRows) as DueOutboxRow[];
}
