/**
 * SQLite's plan for a statement (EXPLAIN QUERY PLAN), one line a step, as the tests that pin a
 * query to its index read it: the very text a store prepares, with parameters of the right kinds.
 */
import type { Store } from '../../src/store/sqlite/database.js';

export function queryPlan(db: Store['db'], sql: string, ...params: unknown[]): string[] {
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((row) => row.detail);
}
