/**
 * The readiness write probe on PostgreSQL (StatusQueries.probeWritable): writable on a primary;
 * "not writable" at once, without stalling, when no connection is free within the wait, and when
 * the server only takes reads (as a standby does after a failover the node still points at).
 */
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { PgStatusQueries } from '../../src/store/postgres/status-queries.js';
import { usePostgresSuite } from '../support/postgres-suite.js';

const suite = usePostgresSuite();

async function open(url: string, options: { maxConnections?: number; migrate?: boolean } = {}) {
  const database = await openDatabase({ url, path: 'unused', synchronous: 'FULL', keyFile: 'unused' }, options);
  suite.afterThisTest(() => database.close());
  if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
  return database;
}

describe('probeWritable on PostgreSQL', () => {
  it('answers not writable within the wait when no connection is free, and writable once one is', async () => {
    // The smallest pool (2: migrating holds two connections), both connections busy.
    const database = await open(await suite.server().createDatabase(), { maxConnections: 1 });
    const status = new PgStatusQueries(database.pool);
    expect(await status.probeWritable(250)).toEqual({ ok: true });
    const held = [await database.pool.connect(), await database.pool.connect()];
    try {
      // The probe's own wait answered, not the pool's 10 s connection timeout ("timeout exceeded when trying to connect").
      expect(await status.probeWritable(100)).toEqual({ ok: false, reason: 'no database connection within 100 ms' });
    } finally {
      for (const client of held) client.release();
    }
    expect(await status.probeWritable(250)).toEqual({ ok: true });
  });

  it('answers not writable on a server that takes only reads', async () => {
    const url = await suite.server().createDatabase();
    const name = url.slice(url.lastIndexOf('/') + 1);
    const migrated = await open(url);
    // New sessions of this database start read-only, as every session of a hot standby is.
    await migrated.pool.query(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
    const database = await open(url, { migrate: false });
    const probe = await new PgStatusQueries(database.pool).probeWritable(250);
    expect(probe).toEqual({ ok: false, reason: 'cannot execute CREATE TABLE in a read-only transaction' });
  });
});
