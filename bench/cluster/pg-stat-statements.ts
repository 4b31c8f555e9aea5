/**
 * PostgreSQL's own statement counts for bench:cluster: the pg_stat_statements extension, loaded
 * into the bench's throwaway server (shared_preload_libraries through ALTER SYSTEM, then the
 * server's restart, which serves the same data directory and so reads postgresql.auto.conf), reset
 * at the start of a column and read at its end for the column's database. Utility statements
 * (BEGIN, COMMIT, LISTEN, NOTIFY) count too (pg_stat_statements.track_utility is on by default), so
 * "statements" is everything the server executed for the nodes.
 */
import pg from 'pg';
import type { PostgresServer } from '../../test/support/postgres-server.js';
import { statementTable } from '../counters/format.js';
import { classifySql } from '../counters/snapshot.js';

const TOP = 10;

export interface StatementStat {
  query: string;
  calls: number;
  rows: number;
  execMs: number;
}

export interface PgStatements {
  /** Forgets every count so far (the column's start). */
  reset(): Promise<void>;
  /** Every statement counted since the reset in `database`, most called first. */
  read(database: string): Promise<StatementStat[]>;
  close(): Promise<void>;
}

/**
 * Loads pg_stat_statements into the server (one restart) and returns its reader, or the reason it
 * is not available (the extension not installed): the bench then prints the nodes' own counts only.
 */
export async function enablePgStatStatements(server: PostgresServer): Promise<PgStatements | string> {
  const connect = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: server.urlFor('postgres') });
    await client.connect();
    return client;
  };
  let admin = await connect();
  try {
    const available = await admin.query("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_stat_statements'");
    if (available.rowCount === 0) return 'pg_stat_statements is not installed with this PostgreSQL';
    await admin.query("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
  } finally {
    await admin.end();
  }
  await server.restart();
  admin = await connect();
  try {
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  } catch (err) {
    await admin.end();
    return `pg_stat_statements did not load: ${(err as Error).message}`;
  }
  const client = admin;
  return {
    async reset() {
      await client.query('SELECT pg_stat_statements_reset()');
    },
    async read(database: string) {
      const result = await client.query<{ query: string; calls: string; rows: string; exec_ms: number }>(
        `SELECT s.query, s.calls, s.rows, s.total_exec_time AS exec_ms
           FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
          WHERE d.datname = $1
          ORDER BY s.calls DESC`,
        [database],
      );
      return result.rows.map((r) => ({ query: r.query, calls: Number(r.calls), rows: Number(r.rows), execMs: Number(r.exec_ms) }));
    },
    async close() {
      await client.end();
    },
  };
}

/** The database name of a postgresql:// URL. */
export function databaseOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

export function statementsTotal(stats: readonly StatementStat[]): number {
  return stats.reduce((sum, s) => sum + s.calls, 0);
}

/** Statements a message in total and the top ones by calls, with rows and the server's execution time a message. */
export function formatPgStatements(label: string, stats: readonly StatementStat[], messages: number): string {
  const per = (n: number, digits = 2): string => (n / messages).toFixed(digits);
  const calls = statementsTotal(stats);
  const execMs = stats.reduce((sum, s) => sum + s.execMs, 0);
  const transactions = stats.filter((s) => /^\s*COMMIT\b/i.test(s.query)).reduce((sum, s) => sum + s.calls, 0);
  const top = stats.slice(0, TOP);
  return [
    `${label}: PostgreSQL statements a message (pg_stat_statements on the server, the column's database, POST -> last webhook): ${per(calls)} ` +
      `(COMMIT ${per(transactions)}), rows ${per(stats.reduce((sum, s) => sum + s.rows, 0))}, execution time ${per(execMs * 1_000, 0)} µs a message`,
    `top ${TOP} statements by calls a message (server side):`,
    statementTable(
      ['calls/msg', 'rows/msg', 'exec µs/msg', 'kind', 'table', 'statement'],
      top.map((s) => {
        const shape = classifySql(s.query);
        const text = shape.normal.length > 120 ? `${shape.normal.slice(0, 117)}...` : shape.normal;
        return [per(s.calls), per(s.rows), per(s.execMs * 1_000, 1), shape.kind, shape.table, text];
      }),
    ),
  ].join('\n');
}
