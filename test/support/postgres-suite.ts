/**
 * One throwaway PostgreSQL per test file and a fresh migrated database per test:
 * the hooks every PostgreSQL test file would otherwise repeat. Call usePostgresSuite() at the top
 * level of a test file; `open()` gives a migrated database that is closed after the test.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { openDatabase, type Database } from '../../src/store/sqlite/database.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

export type PostgresDatabase = Extract<Database, { kind: 'postgres' }>;

export interface PostgresSuite {
  /** The file's server (started in beforeAll). */
  server(): PostgresServer;
  /** A fresh database with every migration applied; closed after the current test. */
  open(): Promise<PostgresDatabase>;
  /**
   * `count` nodes on one fresh database (migrated once), each with its own pool, as `count`
   * gateways sharing a database would be; closed after the current test.
   */
  openNodes(count: number): Promise<PostgresDatabase[]>;
  /** Runs `close` after the current test (before the databases opened by open() close). */
  afterThisTest(close: () => Promise<void>): void;
}

const CONNECTIONS_GONE_DEADLINE_MS = 10_000;

/**
 * pg's pool.end() resolves before the server has seen every connection close; a fast shutdown in
 * between terminates one mid-close, which surfaces as an uncaught 57P01. Waits until no other
 * client connection is left.
 */
export async function untilConnectionsGone(server: PostgresServer): Promise<void> {
  const admin = new pg.Client({ connectionString: server.urlFor('postgres') });
  await admin.connect();
  try {
    const deadline = Date.now() + CONNECTIONS_GONE_DEADLINE_MS;
    for (;;) {
      const { rows } = await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
      );
      if ((rows[0]?.n ?? 0) === 0 || Date.now() >= deadline) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await admin.end();
  }
}

export function usePostgresSuite(): PostgresSuite {
  let server: PostgresServer | undefined;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    if (server === undefined) return;
    await untilConnectionsGone(server);
    await server.stop();
  });
  const running = (): PostgresServer => {
    if (server === undefined) throw new Error('usePostgresSuite: the server starts in beforeAll');
    return server;
  };
  return {
    server: running,
    async open() {
      const database = await openDatabase({ url: await running().createDatabase(), path: 'unused', synchronous: 'FULL', keyFile: 'unused' });
      closers.push(() => database.close());
      if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
      return database;
    },
    async openNodes(count) {
      const config = { url: await running().createDatabase(), path: 'unused', synchronous: 'FULL' as const, keyFile: 'unused' };
      const opened: PostgresDatabase[] = [];
      for (let i = 0; i < count; i++) {
        const database = await openDatabase(config, { migrate: i === 0 });
        closers.push(() => database.close());
        if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
        opened.push(database);
      }
      return opened;
    },
    afterThisTest(close) {
      closers.push(close);
    },
  };
}
