/**
 * Opens the SQLite store: TypeORM DataSource over better-sqlite3 (TypeORM 1.x has no sqlite3 driver),
 * with the pragmas that make a 202 survive kill -9 and a power cut, and the raw better-sqlite3 handle
 * for hot paths that use prepared statements.
 */
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { databaseTarget, maskDatabaseUrlSecret, redactDatabaseUrl } from '../../config/database.js';
import type { DatabaseConfig } from '../../config/types.js';
import { GatewayError } from '../../common/errors.js';
import { DatabaseFileGuard, guardTransactions } from './database-file-guard.js';
import { MIGRATIONS } from './migrations.js';
import { connectListening, pgPoolConfig, type PgPool } from '../postgres/pool.js';

export type SqliteDatabase = BetterSqlite3.Database;

export interface StoreOptions {
  /** SQLite file path, or ':memory:' for throwaway use. */
  path: string;
  /**
   * FULL (default): every commit reaches the disk before it returns, so an accepted campaign survives
   * a power cut, not only a process crash. NORMAL is faster and still survives kill -9 in WAL mode.
   */
  synchronous?: 'FULL' | 'NORMAL';
  busyTimeoutMs?: number;
  /**
   * Create the file when there is none (default true for the library and tests). The commands pass
   * false (openDatabase's default): only `smsgate migrate` and `serve` on a fresh install make a database.
   */
  createIfMissing?: boolean;
}

export interface Store {
  readonly dataSource: DataSource;
  /** The raw connection, for prepared statements on hot paths. Synchronous: keep each call short. */
  readonly db: SqliteDatabase;
  /** Notices the file at the path being deleted or replaced under the open store; undefined for ':memory:'. */
  readonly file: DatabaseFileGuard | undefined;
  close(): Promise<void>;
}

export async function openStore(options: StoreOptions, { migrate = true }: { migrate?: boolean } = {}): Promise<Store> {
  if (options.path !== ':memory:') {
    if (options.createIfMissing === false && !existsSync(options.path)) throw missingDatabase(options.path);
    mkdirSync(dirname(options.path), { recursive: true });
    // The database holds password hashes, sealed secrets and every message. SQLite
    // creates it 0644 and gives -wal and -shm the mode of the database file, so creating it 0600
    // (empty: SQLite treats that as a new database) before SQLite opens it makes all three 0600.
    // An existing file keeps the mode its operator gave it.
    closeSync(openSync(options.path, 'a', 0o600));
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const synchronous = options.synchronous ?? 'FULL';
  const dataSource = new DataSource({
    type: 'better-sqlite3',
    database: options.path,
    // No entities: every query is a prepared statement in a *-store.ts module (src/store/entities.ts).
    entities: [],
    migrations: [...MIGRATIONS],
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    timeout: busyTimeoutMs,
    enableWAL: options.path !== ':memory:',
    prepareDatabase: (db: SqliteDatabase) => {
      db.pragma('foreign_keys = ON');
      db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      db.pragma(`synchronous = ${synchronous}`);
      // Sorts and temporary b-trees (ORDER BY without an index, a batch's VALUES list) in memory:
      // SQLite's default spills them to temp files, measured at 0.9 pwrite64 a message on the
      // engine's hot path (strace of bench:e2e). They hold one statement's rows and never need to
      // survive a crash, so the disk buys nothing.
      db.pragma('temp_store = MEMORY');
    },
  });
  await dataSource.initialize();
  // typeorm's Driver interface does not expose the connection; its better-sqlite3 driver keeps it as
  // `databaseConnection` (typed any), so it is given better-sqlite3's type here, once, not at each use.
  const db = (dataSource.driver as unknown as { databaseConnection: SqliteDatabase }).databaseConnection;
  let file: DatabaseFileGuard | undefined;
  try {
    // The identity of the file as SQLite opened it, before anything writes (migrations included).
    if (options.path !== ':memory:') {
      file = DatabaseFileGuard.of(options.path);
      guardTransactions(db, file);
      file.watch();
    }
    if (migrate) await dataSource.runMigrations({ transaction: 'each' });
  } catch (err) {
    file?.stop();
    await dataSource.destroy();
    throw err;
  }
  return {
    dataSource,
    db,
    file,
    async close() {
      file?.stop();
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}

/**
 * A command other than `smsgate migrate` found no database file: it says so instead of creating an
 * empty one (which would hide a deleted database and leave every token failing).
 */
export function missingDatabase(path: string): GatewayError {
  return new GatewayError(
    'DATABASE_NOT_FOUND',
    `no database at ${path} (database.path): run \`smsgate migrate\` to create a new one; if it was deleted or moved, restore it (with its key file) or correct database.path`,
  );
}

/** Applies pending migrations; returns the names applied (empty when up to date). */
export async function applyMigrations(store: Store): Promise<string[]> {
  const applied = await store.dataSource.runMigrations({ transaction: 'each' });
  return applied.map((m) => m.name);
}

/**
 * Either backend, as the config selects it: SQLite through openStore above, or
 * PostgreSQL through TypeORM's postgres driver on pg 8 (migrations) and the driver's pg pool (the
 * stores in src/store/pg, src/store/postgres/stores.ts createPgStores). `describe` names the database
 * for messages: the SQLite path, or the URL with its password redacted.
 */
export type Database =
  | { readonly kind: 'sqlite'; readonly store: Store; readonly describe: string; close(): Promise<void> }
  | { readonly kind: 'postgres'; readonly dataSource: DataSource; readonly pool: PgPool; readonly describe: string; close(): Promise<void> };

export interface OpenDatabaseOptions {
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
  /** PostgreSQL only: the pool's size (default DEFAULT_POOL_SIZE). */
  maxConnections?: number;
  /**
   * SQLite only: create the database file when there is none. Default false: a command refuses with
   * DATABASE_NOT_FOUND naming the file. Only `smsgate migrate` (and a command that sets up a new
   * installation) passes true.
   */
  createIfMissing?: boolean;
}

export async function openDatabase(config: DatabaseConfig, options: OpenDatabaseOptions = {}): Promise<Database> {
  const target = databaseTarget(config);
  const migrate = options.migrate ?? true;
  if (target.kind === 'sqlite') {
    const store = await openStore({ path: target.path, synchronous: target.synchronous, createIfMissing: options.createIfMissing ?? false }, { migrate });
    return { kind: 'sqlite', store, describe: target.path, close: () => store.close() };
  }
  const describe = redactDatabaseUrl(target.url);
  let dataSource: DataSource;
  try {
    dataSource = new DataSource({
      type: 'postgres',
      url: target.url,
      entities: [],
      migrations: [...MIGRATIONS],
      migrationsTransactionMode: 'each',
      synchronize: false,
      logging: false,
      // Handed to pg.Pool as it is: int8 as numbers, per pool (src/store/postgres/pool.ts).
      extra: pgPoolConfig(target.url, options.maxConnections),
    });
    await dataSource.initialize();
  } catch (cause) {
    // pg's message may echo the connection string or its parts: the password is masked in it too.
    const reason = maskDatabaseUrlSecret((cause as Error).message, target.url);
    throw new GatewayError('DATABASE_UNREACHABLE', `cannot connect to PostgreSQL at ${describe}: ${reason}`, { cause });
  }
  // typeorm's Driver interface does not expose the pool; its postgres driver keeps it as `master`.
  const pool = (dataSource.driver as unknown as { master: PgPool }).master;
  const database: Database = {
    kind: 'postgres',
    dataSource,
    pool,
    describe,
    async close() {
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
  try {
    if (migrate) await applyDatabaseMigrations(database);
  } catch (err) {
    await database.close();
    throw err;
  }
  return database;
}

/**
 * Key of the advisory lock nodes take to migrate: every `serve` of a cluster may start at once, and
 * TypeORM's migration run is not safe against a second one running beside it.
 */
const MIGRATION_LOCK_KEY = 0x736d_7367_6d69; // 'smsgmi'

/** Applies pending migrations on either backend; returns the names applied (empty when up to date). */
export async function applyDatabaseMigrations(database: Database): Promise<string[]> {
  if (database.kind === 'sqlite') return applyMigrations(database.store);
  // The lock's session sits idle while TypeORM migrates on another connection: its loss must be heard.
  let lost: Error | undefined;
  const onError = (err: Error): void => {
    lost = err;
  };
  const client = await connectListening(database.pool, onError);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await database.dataSource.runMigrations({ transaction: 'each' });
      return applied.map((m) => m.name);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    client.off('error', onError);
    client.release(lost);
  }
}
