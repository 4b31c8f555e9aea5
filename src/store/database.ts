/**
 * Opens the SQLite store: TypeORM DataSource over better-sqlite3 (TypeORM 1.x has no sqlite3 driver),
 * with the pragmas that make a 202 survive kill -9 and a power cut, and the raw better-sqlite3 handle
 * for hot paths that use prepared statements.
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from './migrations.js';

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
}

export interface Store {
  readonly dataSource: DataSource;
  /** The raw connection, for prepared statements on hot paths. Synchronous: keep each call short. */
  readonly db: SqliteDatabase;
  close(): Promise<void>;
}

export async function openStore(options: StoreOptions, { migrate = true }: { migrate?: boolean } = {}): Promise<Store> {
  if (options.path !== ':memory:') {
    mkdirSync(dirname(options.path), { recursive: true });
    // Issue 9 item 10: the database holds password hashes, sealed secrets and every message. SQLite
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
    },
  });
  await dataSource.initialize();
  if (migrate) await dataSource.runMigrations({ transaction: 'each' });
  // typeorm's Driver interface does not expose the connection; its better-sqlite3 driver keeps it as
  // `databaseConnection` (typed any), so it is given better-sqlite3's type here, once, not at each use.
  const db = (dataSource.driver as unknown as { databaseConnection: SqliteDatabase }).databaseConnection;
  return {
    dataSource,
    db,
    async close() {
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}

/** Applies pending migrations; returns the names applied (empty when up to date). */
export async function applyMigrations(store: Store): Promise<string[]> {
  const applied = await store.dataSource.runMigrations({ transaction: 'each' });
  return applied.map((m) => m.name);
}
