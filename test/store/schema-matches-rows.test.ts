/**
 * One schema source. A fresh SQLite file migrated to the latest version has exactly
 * the tables and columns of TABLE_COLUMNS (src/store/entities.ts), which the compiler checks against
 * the row types the store uses; so the migrations, the runtime list and the row types cannot drift.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { TABLE_COLUMNS } from '../../src/store/entities.js';

interface TableInfoRow {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

// TypeORM's record of applied migrations: not a table of ours.
const MIGRATION_BOOKKEEPING = 'migrations';

describe('migrated schema', () => {
  let dir: string;
  let store: Store;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'smsgate-schema-'));
    store = await openStore({ path: join(dir, 'fresh.sqlite') });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has exactly the tables and columns (affinity and nullability) the row types declare', () => {
    const tables = store.db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> ? ORDER BY name`)
      .all(MIGRATION_BOOKKEEPING) as { name: string }[];
    const migrated: Record<string, Record<string, string>> = {};
    for (const { name } of tables) {
      const columns = store.db.prepare(`PRAGMA table_info("${name}")`).all() as TableInfoRow[];
      // A primary key column is never NULL in practice (INTEGER PRIMARY KEY is the rowid), though
      // table_info reports notnull 0 for it: TABLE_COLUMNS declares it NOT NULL.
      migrated[name] = Object.fromEntries(columns.map((c) => [c.name, `${c.type}${c.notnull === 1 || c.pk > 0 ? '' : ' null'}`]));
    }
    const declared = Object.fromEntries(Object.entries(TABLE_COLUMNS).map(([table, columns]) => [table, { ...columns }]));
    expect(migrated).toEqual(declared);
  });
});
