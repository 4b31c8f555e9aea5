/**
 * Every landed migration applies to a fresh PostgreSQL database, the
 * tables and columns are those of TABLE_COLUMNS (src/store/entities.ts, also checked against SQLite
 * by schema-matches-rows.test.ts): INTEGER columns are BIGINT, returned as JS numbers; a second run
 * applies nothing. The throwaway server: test/support/postgres-server.ts.
 */
import { describe, expect, it } from 'vitest';
import { applyDatabaseMigrations, openDatabase } from '../../src/store/sqlite/database.js';
import { TABLE_COLUMNS } from '../../src/store/entities.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { usePostgresSuite, type PostgresDatabase } from '../support/postgres-suite.js';

const MIGRATION_BOOKKEEPING = 'migrations';
/** information_schema's data_type as TABLE_COLUMNS writes it (SQLite's affinity names). */
const AS_DECLARED: Record<string, string> = { bigint: 'INTEGER', text: 'TEXT' };

describe('migrations on PostgreSQL', () => {
  const suite = usePostgresSuite();
  const open = (): Promise<PostgresDatabase> => suite.open();

  it('builds exactly the tables and columns (type and nullability) the row types declare', async () => {
    const pg = await open();
    const { rows } = await pg.pool.query<{ table_name: string; column_name: string; data_type: string; is_nullable: 'YES' | 'NO' }>(
      `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name <> $1 ORDER BY table_name, ordinal_position`,
      [MIGRATION_BOOKKEEPING],
    );
    const migrated: Record<string, Record<string, string>> = {};
    for (const c of rows) {
      (migrated[c.table_name] ??= {})[c.column_name] = `${AS_DECLARED[c.data_type] ?? c.data_type}${c.is_nullable === 'YES' ? ' null' : ''}`;
    }
    const declared = Object.fromEntries(Object.entries(TABLE_COLUMNS).map(([table, columns]) => [table, { ...columns }]));
    expect(migrated).toEqual(declared);
  });

  it('records every migration once and applies nothing the second time', async () => {
    const pg = await open();
    const { rows } = await pg.pool.query<{ name: string }>(`SELECT name FROM migrations ORDER BY id`);
    expect(rows.map((r) => r.name)).toEqual(MIGRATIONS.map((m) => new m().name));
    expect(await applyDatabaseMigrations(pg)).toEqual([]);
  });

  it('keeps the partial redrive index and the ids as identity columns', async () => {
    const pg = await open();
    const { rows: indexes } = await pg.pool.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE indexname = 'webhook_outbox_redrive'`);
    expect(indexes[0]?.indexdef).toMatch(/WHERE \(\(state = 'dead'::text\) AND \(dead_reason = 'transient'::text\)\)$/);
    const { rows: ids } = await pg.pool.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'id' AND is_identity = 'YES' ORDER BY table_name`,
    );
    expect(ids.map((r) => r.table_name)).toEqual([
      'clients', 'credit_ledger', 'inbound_messages', 'inbound_parts', 'inbound_routes', 'message_parts', 'personal_access_tokens', 'receipts', 'recipients',
      'senders', 'smpp_accounts', 'smpp_deliveries', 'undecodable_pdus', 'users', 'webhook_outbox',
    ]);
  });

  it('returns BIGINT as a JS number, and refuses one past the safe-integer range instead of rounding it', async () => {
    const pg = await open();
    const { rows } = await pg.pool.query<{ at: unknown; n: unknown }>(`SELECT 1765100000123::bigint AS at, COUNT(*) AS n FROM clients`);
    expect(rows[0]).toEqual({ at: 1765100000123, n: 0 });
    await expect(pg.pool.query(`SELECT 9007199254740993::bigint AS v`)).rejects.toThrow(/safe-integer range/);
  });

  it('names the database, without its password, when it cannot connect', async () => {
    const url = `postgresql://smsgate:hunter2@127.0.0.1:${suite.server().port}/no_such_database`;
    const failure = await openDatabase({ url, path: 'unused', synchronous: 'FULL', keyFile: 'unused' }).then(() => undefined, (err: unknown) => err);
    expect(failure).toMatchObject({ code: 'DATABASE_UNREACHABLE' });
    expect((failure as Error).message).toContain(`postgresql://smsgate:***@127.0.0.1:${suite.server().port}/no_such_database`);
    expect((failure as Error).message).not.toContain('hunter2');
  });
});
