/**
 * The landed migrations became dialect-aware (migrations/dialect.ts), and on SQLite
 * they must still build exactly the schema they built before: every table, index and trigger of a
 * fresh database, SQL text included, equals the sqlite_master recorded from main's migrations
 * before the change (test/store/fixtures/sqlite-schema-1764700000001.json). Only the migrations
 * recorded there run, so later migrations do not change what is compared.
 */
import { readFileSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';

interface SchemaObject { type: string; name: string; tbl_name: string; sql: string | null }
interface Recorded { migrations: string[]; objects: SchemaObject[] }

const recorded = JSON.parse(readFileSync(new URL('./fixtures/sqlite-schema-1764700000001.json', import.meta.url), 'utf8')) as Recorded;

describe('SQLite schema built by the dialect-aware migrations', () => {
  let dataSource: DataSource | undefined;
  afterEach(async () => {
    await dataSource?.destroy();
    dataSource = undefined;
  });

  it('is byte-identical to the one main\'s migrations built', async () => {
    const migrations = MIGRATIONS.filter((m) => recorded.migrations.includes(new m().name));
    expect(migrations.map((m) => new m().name)).toEqual(recorded.migrations);
    dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:', entities: [], migrations, synchronize: false, logging: false });
    await dataSource.initialize();
    await dataSource.runMigrations({ transaction: 'each' });
    const db = (dataSource.driver as unknown as { databaseConnection: BetterSqlite3.Database }).databaseConnection;
    const objects = db.prepare(`SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`).all();
    expect(objects).toEqual(recorded.objects);
  });
});
