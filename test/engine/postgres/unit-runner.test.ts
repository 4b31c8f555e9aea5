/**
 * The PostgreSQL engine's group commit (src/engine/postgres/unit-runner.ts) on a real server: units
 * queued together share a transaction and settle after its COMMIT; a unit that fails for a reason
 * no retry cures fails alone while its neighbours commit; a batch whose connection the server
 * kills (57P01, as in a failover) is run again until it commits, `stalled` meanwhile.
 */
import { expect, it } from 'vitest';
import { PgUnitRunner } from '../../../src/engine/postgres/unit-runner.js';
import { silentLogger } from '../../../src/common/log.js';
import { rows, type PgClient, type PgPool } from '../../../src/store/postgres/pool.js';
import { usePostgresSuite } from '../../support/postgres-suite.js';
import { until } from '../conformance/engine-backends.js';

const suite = usePostgresSuite();

async function scratch(): Promise<PgPool> {
  const { pool } = await suite.open();
  await pool.query('CREATE TABLE scratch (n INTEGER PRIMARY KEY)');
  return pool;
}

const insert = (n: number) => async (client: PgClient): Promise<number> => {
  await client.query('INSERT INTO scratch (n) VALUES ($1)', [n]);
  return n * 10;
};

const stored = async (pool: PgPool): Promise<number[]> => (await rows<{ n: number }>(pool, 'SELECT n FROM scratch ORDER BY n')).map((r) => r.n);

it('commits 20 units queued together in fewer transactions than units, each resolving with its own result after COMMIT', async () => {
  const pool = await scratch();
  const runner = new PgUnitRunner(pool, silentLogger(), { maxBatch: 32, maxConcurrent: 1 });
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => runner.write(insert(i + 1))));
  expect(results).toEqual(Array.from({ length: 20 }, (_, i) => (i + 1) * 10));
  expect(await stored(pool)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  // All 20 were queued before the first transaction began: one transaction (maxBatch 32).
  expect(runner.commits).toBe(1);
  expect(runner.failedCommits).toBe(0);
});

it('fails a unit that breaks a constraint alone; its neighbours in the batch commit', async () => {
  const pool = await scratch();
  await pool.query('INSERT INTO scratch (n) VALUES (2)');
  const runner = new PgUnitRunner(pool, silentLogger(), { maxConcurrent: 1 });
  const settled = await Promise.allSettled([runner.write(insert(1)), runner.write(insert(2)), runner.write(insert(3))]);
  expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23505' });
  expect(await stored(pool)).toEqual([1, 2, 3]);
  expect(runner.stalled).toBe(false);
});

it('runs a batch whose connection the server kills (57P01) again until it commits; stalled while it waits', async () => {
  const pool = await scratch();
  const runner = new PgUnitRunner(pool, silentLogger(), { retryBaseDelayMs: 200, retryMaxDelayMs: 200 });
  let attempts = 0;
  const written = runner.write(async (client) => {
    attempts++;
    await client.query('INSERT INTO scratch (n) VALUES (7)');
    // The first attempt's connection is terminated by the server before COMMIT.
    if (attempts === 1) await client.query('SELECT pg_terminate_backend(pg_backend_pid())');
    return 'done';
  });
  await until(async () => runner.stalled, (stalled) => stalled);
  expect(await stored(pool)).toEqual([]);
  expect(await written).toBe('done');
  expect(attempts).toBe(2);
  expect(runner.failedCommits).toBe(1);
  expect(runner.stalled).toBe(false);
  expect(await stored(pool)).toEqual([7]);
});

it('refuses new units after close, and a batch waiting for its retry gets one last attempt', async () => {
  const pool = await scratch();
  const runner = new PgUnitRunner(pool, silentLogger(), { retryBaseDelayMs: 60_000, retryMaxDelayMs: 60_000 });
  let attempts = 0;
  const written = runner.write(async (client) => {
    attempts++;
    await client.query('INSERT INTO scratch (n) VALUES (9)');
    if (attempts === 1) await client.query('SELECT pg_terminate_backend(pg_backend_pid())');
    return attempts;
  });
  await until(async () => runner.stalled, (stalled) => stalled);
  await runner.close();
  expect(await written).toBe(2);
  await expect(runner.write(insert(1))).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  expect(await stored(pool)).toEqual([9]);
});

it('close resolves only after the units queued and the transaction running have ended', async () => {
  const pool = await scratch();
  // A long gathering delay: without close the queued unit would wait for its timer.
  const runner = new PgUnitRunner(pool, silentLogger(), { maxBatch: 1, maxConcurrent: 1, maxDelayMs: 60_000 });
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let running = false;
  const first = runner.write(async (client) => {
    running = true;
    await held;
    await client.query('INSERT INTO scratch (n) VALUES (1)');
    return 1;
  });
  await until(async () => running, (r) => r);
  const second = runner.write(insert(2));
  let closed = false;
  const closing = runner.close().then(() => {
    closed = true;
  });
  // The first transaction is still open: close has not resolved, and nothing is committed.
  expect(await stored(pool)).toEqual([]);
  expect(closed).toBe(false);
  release();
  await closing;
  // Once close resolved both units have committed: no transaction of this runner is left running.
  expect(await stored(pool)).toEqual([1, 2]);
  expect(await Promise.all([first, second])).toEqual([1, 20]);
  expect(runner.commits).toBe(2);
});
