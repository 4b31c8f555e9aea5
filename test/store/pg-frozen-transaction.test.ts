/**
 * A node frozen inside a transaction (SIGSTOP past the lease) must not hold its
 * locks for as long as it is frozen: every pool from pgPoolConfig has the server end a session that
 * waits on us inside a transaction for longer than IDLE_IN_TRANSACTION_TIMEOUT_MS, so a peer's write
 * to the same row, and its advisory lock on the same message id, go through soon after.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { IDLE_IN_TRANSACTION_TIMEOUT_MS, pgPoolConfig } from '../../src/store/postgres/pool.js';
import { isTransientStoreFailure } from '../../src/store/write-failures.js';
import { usePostgresSuite } from '../support/postgres-suite.js';

const suite = usePostgresSuite();

async function poolOn(url: string): Promise<pg.Pool> {
  const pool = new pg.Pool(pgPoolConfig(url, 2));
  pool.on('error', () => undefined); // the frozen session's end reaches its idle client here
  suite.afterThisTest(() => pool.end());
  return pool;
}

describe('a transaction left open by a frozen node', () => {
  it('is ended by the server after the idle-in-transaction timeout, releasing its row and advisory locks to a peer', async () => {
    const url = await suite.server().createDatabase();
    const frozen = await poolOn(url);
    const peer = await poolOn(url);
    await peer.query('CREATE TABLE t (id int PRIMARY KEY, v int)');
    await peer.query('INSERT INTO t VALUES (1, 0)');

    // The frozen node: inside a transaction, holding a row lock and an advisory transaction lock, then silent.
    const client = await frozen.connect();
    // The ended session reports itself as 'error' events (the server's FATAL, then the closed socket), as to inTransaction's listener.
    const ended = new Promise<Error>((resolve) => client.on('error', resolve));
    await client.query('BEGIN');
    await client.query('UPDATE t SET v = 1 WHERE id = 1');
    await client.query('SELECT pg_advisory_xact_lock(42)');

    const startedMs = Date.now();
    // The peer waits on both locks (no timeout of its own); they are released when the server ends the session.
    await peer.query('UPDATE t SET v = 2 WHERE id = 1');
    await peer.query('SELECT pg_advisory_xact_lock(42)');
    const waitedMs = Date.now() - startedMs;
    expect(waitedMs).toBeGreaterThanOrEqual(IDLE_IN_TRANSACTION_TIMEOUT_MS - 100);
    expect(waitedMs).toBeLessThan(IDLE_IN_TRANSACTION_TIMEOUT_MS + 5_000);

    // Its uncommitted write is gone, and the frozen node, woken, finds its session ended: a failure a retry cures.
    expect((await peer.query<{ v: number }>('SELECT v FROM t WHERE id = 1')).rows[0]?.v).toBe(2);
    const err = await client.query('COMMIT').then(() => undefined, (e: unknown) => e);
    client.release(true);
    expect(err ?? (await ended)).toBeInstanceOf(Error);
    expect(isTransientStoreFailure(err ?? (await ended))).toBe(true);
  });
});
