/**
 * LISTEN/NOTIFY wake-ups between nodes on a real PostgreSQL (src/store/postgres/wakeups.ts): a
 * notification reaches the listener when the notifying transaction commits, not before; a listener
 * whose connection is killed says so, reconnects and hears the next one.
 */
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/sqlite/database.js';
import type { PgPool } from '../../src/store/postgres/pool.js';
import { notifyWake, PgWakeups, type WakeChannel } from '../../src/store/postgres/wakeups.js';
import { usePostgresSuite } from '../support/postgres-suite.js';

const suite = usePostgresSuite();

async function until(condition: () => boolean, deadlineMs = 10_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() >= deadline) throw new Error('condition not met before the deadline');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function setUp(): Promise<{ url: string; pool: PgPool; heard: [WakeChannel, string][]; listening: boolean[]; wakeups: PgWakeups }> {
  const url = await suite.server().createDatabase();
  const database = await openDatabase({ url, path: 'unused', synchronous: 'FULL', keyFile: 'unused' }, { migrate: false });
  suite.afterThisTest(() => database.close());
  if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
  const heard: [WakeChannel, string][] = [];
  const listening: boolean[] = [];
  const wakeups = await PgWakeups.start({
    url, channels: ['smsgate_parts', 'smsgate_outbox'], reconnectDelayMs: 50,
    onWake: (channel, payload) => heard.push([channel, payload]),
    onListening: (now) => listening.push(now),
  });
  suite.afterThisTest(() => wakeups.close());
  return { url, pool: database.pool, heard, listening, wakeups };
}

describe('PgWakeups', () => {
  it('wakes the listener when the notifying transaction commits, not before, on the channels it listens to', async () => {
    const { pool, heard } = await setUp();
    const inTransaction = await pool.connect();
    try {
      await inTransaction.query('BEGIN');
      await notifyWake(inTransaction, 'smsgate_parts', 'carrier');
      await notifyWake(pool, 'smsgate_campaigns', 'not listened to');
      await notifyWake(pool, 'smsgate_outbox', 'now');
      await until(() => heard.length >= 1);
      // The outbox wake-up committed first and arrived; the parts one waits for its COMMIT.
      expect(heard).toEqual([['smsgate_outbox', 'now']]);
      await inTransaction.query('COMMIT');
    } finally {
      inTransaction.release();
    }
    await until(() => heard.length >= 2);
    expect(heard).toEqual([['smsgate_outbox', 'now'], ['smsgate_parts', 'carrier']]);
  });

  it('reports a dropped listener, reconnects and hears the next wake-up', async () => {
    const { pool, heard, listening } = await setUp();
    expect(listening).toEqual([true]);
    const killed = await pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`);
    expect(killed.rowCount).toBe(1);
    await until(() => listening.length >= 3);
    expect(listening).toEqual([true, false, true]);
    await notifyWake(pool, 'smsgate_parts', 'after');
    await until(() => heard.length >= 1);
    expect(heard).toEqual([['smsgate_parts', 'after']]);
  });
});
