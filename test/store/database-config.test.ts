/**
 * `"database": {"url": "postgresql://..."}` (or postgres://) selects PostgreSQL,
 * `"database": {"path": ...}` (the default) SQLite; both, or a bad URL, is a config error naming the
 * key and the file, and a password in the URL never appears in a message.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseTarget, describeDatabase, redactDatabaseUrl } from '../../src/config/index.js';
import { isGatewayError } from '../../src/common/errors.js';
import { loadConfig, resolveConfigFromObject } from '../../src/gateway/config.js';

const dir = mkdtempSync(join(tmpdir(), 'smsgate-dbconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function rejection(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (isGatewayError(err, 'CONFIG_INVALID')) return err.message;
    throw err;
  }
  throw new Error('config was accepted');
}

describe('database config', () => {
  it('stays SQLite at data/smsgate.sqlite when the section is left out', () => {
    const config = resolveConfigFromObject({}, 'c.json', {});
    expect(databaseTarget(config.database)).toEqual({ kind: 'sqlite', path: 'data/smsgate.sqlite', synchronous: 'FULL' });
  });

  it('selects PostgreSQL by a postgresql:// or postgres:// url', () => {
    for (const url of ['postgresql://gw@db.example:5433/smsgate', 'postgres://gw:pw@10.0.0.5/smsgate?sslmode=require']) {
      const config = resolveConfigFromObject({ database: { url } }, 'c.json', {});
      expect(databaseTarget(config.database)).toEqual({ kind: 'postgres', url });
    }
  });

  it('takes the URL from the environment like any string (a password kept out of the file)', () => {
    const config = resolveConfigFromObject({ database: { url: 'postgresql://gw:${PGPASS}@db/smsgate' } }, 'c.json', { PGPASS: 's3cret' });
    expect(databaseTarget(config.database)).toEqual({ kind: 'postgres', url: 'postgresql://gw:s3cret@db/smsgate' });
  });

  it('refuses path and url together, naming the key and the file', () => {
    const file = join(dir, 'both.json');
    writeFileSync(file, JSON.stringify({ database: { path: 'x.sqlite', url: 'postgresql://gw@db/smsgate' } }));
    expect(rejection(() => loadConfig(file, {}))).toBe(
      `${file}: database.url: give either database.url (PostgreSQL) or database.path (SQLite), not both`,
    );
  });

  it.each([
    ['another scheme', 'mysql://gw@db/smsgate', '"mysql://gw@db/smsgate" is not a PostgreSQL URL: it must start with postgresql:// or postgres://'],
    ['no database', 'postgresql://gw@db:5432/', '"postgresql://gw@db:5432/" names no database (postgresql://user@host:port/database)'],
    ['not a URL', 'db.example:5432', '"db.example:5432" is not a PostgreSQL URL: it must start with postgresql:// or postgres://'],
    ['a bad port', 'postgresql://gw@db:99999/smsgate',
      '"postgresql://gw@db:99999/smsgate" is not a URL (postgresql://user:password@host:port/database); in the user and password, write / ? # @ : % and space percent-encoded (%2F %3F %23 %40 %3A %25 %20)'],
    ['a raw / in the password', 'postgresql://gw:pa/ss@db/smsgate',
      '"postgresql://gw:***@db/smsgate" is not a URL (postgresql://user:password@host:port/database); in the user and password, write / ? # @ : % and space percent-encoded (%2F %3F %23 %40 %3A %25 %20)'],
    ['a lone % in the password', 'postgresql://gw:50%off@db/smsgate',
      '"postgresql://gw:***@db/smsgate": the password is not percent-encoded correctly (a % must start %XX: write %25 for %)'],
  ])('refuses a url with %s', (_name, url, what) => {
    expect(rejection(() => resolveConfigFromObject({ database: { url } }, 'v.json', {}))).toBe(`v.json: database.url: ${what}`);
  });

  it('never shows the password of a rejected url', () => {
    const message = rejection(() => resolveConfigFromObject({ database: { url: 'mysql://gw:hunter2@db/x' } }, 'v.json', {}));
    expect(message).not.toContain('hunter2');
    expect(message).toContain('mysql://gw:***@db/x');
  });

  it('describes a database without its password', () => {
    expect(redactDatabaseUrl('postgresql://gw:hunter2@db:5432/smsgate')).toBe('postgresql://gw:***@db:5432/smsgate');
    expect(redactDatabaseUrl('postgresql://gw@db/smsgate')).toBe('postgresql://gw@db/smsgate');
    expect(redactDatabaseUrl('postgresql://gw:hunter2@db:99999/x')).toBe('postgresql://gw:***@db:99999/x');
    const config = resolveConfigFromObject({ database: { url: 'postgres://gw:hunter2@db/smsgate' } }, 'c.json', {});
    expect(describeDatabase(config.database)).toBe('postgres://gw:***@db/smsgate');
  });
});
