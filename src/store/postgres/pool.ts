/**
 * The PostgreSQL connection pool and its type parsing. Millisecond timestamps,
 * ids and counts are BIGINT (int8) in PostgreSQL (migrations/dialect.ts); pg returns int8 as a
 * string by default, because not every int8 fits a JS number. Every int8 this schema holds does
 * (ids, counts, ms since the epoch are far below 2^53), so this pool parses int8 to a number and
 * refuses one outside the safe-integer range rather than round it. The parser is the pool's own
 * (`types`), not pg's global registry, so other pg users in the process are untouched.
 */
import pg from 'pg';

/** PostgreSQL's type oid of int8 (bigint): pg_type.oid, fixed since forever. */
const INT8_OID = 20;

function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`int8 value ${text} is outside the safe-integer range of a JS number`);
  return value;
}

export const PG_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

/** Connections per pool unless configured otherwise: a node's lanes, sender and API share them. */
export const DEFAULT_POOL_SIZE = 10;

/**
 * How long a store call waits for a connection (a free one of the pool, or a new one to the server)
 * before it fails: a server that is gone makes calls fail, not hang (pg's default is to wait forever).
 */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The fewest connections a pool may have: migrating holds two at once (the advisory lock's session
 * and TypeORM's runner, src/store/sqlite/database.ts applyDatabaseMigrations).
 */
export const MIN_POOL_SIZE = 2;

/**
 * How long the server lets one of our sessions sit inside a transaction waiting for us before it
 * ends the session (PostgreSQL's idle_in_transaction_session_timeout). A node frozen mid-transaction
 * (SIGSTOP, a VM paused, a swap storm) would otherwise hold its row and advisory locks for as long as
 * it is frozen, and every other node's takeover of its work, and their own receipts for the same
 * message ids, would wait on them: the cluster stalls behind one stopped process. Killed after this,
 * its transaction rolls back (the frozen node's writes were not committed: at-least-once re-sends
 * them) and the locks go with it, well inside the 5 s node lease (NODE_LEASE_MS). Our transactions
 * never wait on their own client for more than a loop turn, so a live node is never hit by it.
 */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 2_000;

/** The pool options for a URL: int8 as numbers (above), bounded waits for a connection, no lock held by a frozen node. */
export function pgPoolConfig(url: string, maxConnections = DEFAULT_POOL_SIZE): pg.PoolConfig {
  return {
    connectionString: url,
    types: PG_TYPES,
    max: Math.max(MIN_POOL_SIZE, maxConnections),
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
  };
}

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;

/** A client of the pool or the pool itself: what runs one statement. */
export type PgQueryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

/**
 * What a store runs on: the pool (each method its own unit), or a connection inside a transaction
 * its caller opened with inTransaction, so several store methods form one unit (the engine's
 * materialise, outcome and receipt units).
 */
export type PgRunner = PgPool | PgClient;

/**
 * Runs `body` in one transaction on one pooled connection: COMMIT when it resolves, ROLLBACK when
 * it throws. One store method is one such unit (src/store/ports.ts); callers never hold it across
 * their own awaits. Given a connection instead of the pool, `body` joins the transaction already
 * open on it (the caller's BEGIN and COMMIT enclose it).
 */
export async function inTransaction<T>(db: PgRunner, body: (client: PgClient) => Promise<T>): Promise<T> {
  if (!(db instanceof pg.Pool)) return body(db);
  // A connection whose ROLLBACK fails, or that reported an error, is broken (the server went
  // away): it is destroyed, not handed back to the pool for the next unit to fail on.
  let broken: Error | undefined;
  // A checked-out connection reports its loss (a server shutdown, pg_terminate_backend) as an
  // 'error' event when no query is running; unheard, that event would crash the process.
  const onError = (err: Error): void => {
    broken = err;
  };
  const client = await connectListening(db, onError);
  try {
    await client.query('BEGIN');
    const result = await body(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
      broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
    });
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/**
 * pool.connect() with an 'error' listener attached in pg-pool's callback, i.e. at once: the promise
 * form resolves a turn later, and a FATAL message read in the same chunk as the connection's
 * ReadyForQuery (a backend killed as it starts) would be emitted in between with nobody listening.
 */
/**
 * A pooled connection with `onError` listening from the moment it is handed out: a checked-out
 * connection that the server ends while no query runs (a shutdown, pg_terminate_backend, the idle
 * transaction timeout) reports it as an 'error' event, which unheard would crash the process. The
 * caller removes the listener and releases the connection (with the error, so it is destroyed).
 */
export function connectListening(pool: PgPool, onError: (err: Error) => void): Promise<PgClient> {
  return new Promise((resolve, reject) => {
    pool.connect((err, client) => {
      if (err !== undefined && err !== null) {
        reject(err);
        return;
      }
      if (client === undefined) {
        reject(new Error('pg-pool gave neither a client nor an error'));
        return;
      }
      client.on('error', onError);
      resolve(client);
    });
  });
}

/** The rows of one statement. */
export async function rows<Row extends pg.QueryResultRow>(db: PgQueryable, sql: string, params: readonly unknown[] = []): Promise<Row[]> {
  return (await db.query<Row>(sql, params as unknown[])).rows;
}

/** The first row of one statement, or undefined. */
export async function row<Row extends pg.QueryResultRow>(db: PgQueryable, sql: string, params: readonly unknown[] = []): Promise<Row | undefined> {
  return (await db.query<Row>(sql, params as unknown[])).rows[0];
}

/** How many rows one statement changed. */
export async function changes(db: PgQueryable, sql: string, params: readonly unknown[] = []): Promise<number> {
  return (await db.query(sql, params as unknown[])).rowCount ?? 0;
}
