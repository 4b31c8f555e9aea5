/**
 * The SQLite store notices its file deleted or replaced under it (src/store/sqlite/database-file-guard.ts),
 * on real files: a transaction is rolled back and refused with DATABASE_FILE_MOVED (a store write
 * refusal: HTTP 503, retried by the engine), the readiness probe says not writable, and writes
 * outside a transaction are refused too. The key file rule every command follows is one pure function.
 */
import { copyFileSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/common/errors.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { compareFileIdentity } from '../../src/store/sqlite/database-file-guard.js';
import { keyFileAction } from '../../src/store/secret-box.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';
import { isTransientStoreFailure } from '../../src/store/write-failures.js';
import { isStoreWriteRefusal } from '../../src/store/write-refusal.js';

const dirs: string[] = [];
const stores: Store[] = [];

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function storeInTempDir(): Promise<{ store: Store; path: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-file-guard-'));
  dirs.push(dir);
  const path = join(dir, 'gw.sqlite');
  const store = await openStore({ path });
  stores.push(store);
  store.db.exec('CREATE TABLE t (x INTEGER)');
  return { store, path, dir };
}

function thrown(body: () => unknown): unknown {
  try {
    body();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('a database file moved under the open store', () => {
  it('refuses and rolls back a transaction once the file is deleted, and the probe says why', async () => {
    const { store, path } = await storeInTempDir();
    const insert = store.db.transaction((x: number) => store.db.prepare('INSERT INTO t (x) VALUES (?)').run(x));
    insert(1);
    expect(await sqliteStorePorts(store).status.probeWritable()).toEqual({ ok: true });

    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    const err = thrown(() => insert(2));
    expect(isGatewayError(err) && err.code).toBe('DATABASE_FILE_MOVED');
    expect((err as Error).message).toContain(`the database file ${path} was deleted or moved away`);
    // The callers' rules: a refusal (503 with Retry-After) and a failure the engine retries, never one it gives up on.
    expect(isStoreWriteRefusal(err)).toBe(true);
    expect(isTransientStoreFailure(err)).toBe(true);
    // Rolled back: the open file holds only the first row.
    expect(store.db.prepare('SELECT x FROM t').pluck().all()).toEqual([1]);
    const probe = await sqliteStorePorts(store).status.probeWritable();
    expect(probe.ok).toBe(false);
    expect(probe.ok ? '' : probe.reason).toContain('was deleted or moved away');
    // Outside a transaction too (query_only), as a store write refusal.
    const single = thrown(() => store.db.prepare('INSERT INTO t (x) VALUES (3)').run());
    expect(isStoreWriteRefusal(single)).toBe(true);
  });

  it('refuses once another file is moved over the path (a restore under a running gateway)', async () => {
    const { store, path, dir } = await storeInTempDir();
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    copyFileSync(path, join(dir, 'copy.sqlite'));
    renameSync(join(dir, 'copy.sqlite'), path);
    const err = thrown(() => store.db.transaction(() => store.db.prepare('INSERT INTO t (x) VALUES (1)').run())());
    expect(isGatewayError(err) && err.code).toBe('DATABASE_FILE_MOVED');
    expect((err as Error).message).toContain('was replaced by another file');
  });

  it('compares device and inode', () => {
    const opened = { dev: 1n, ino: 7n };
    expect(compareFileIdentity(opened, { dev: 1n, ino: 7n })).toBe('unchanged');
    expect(compareFileIdentity(opened, undefined)).toBe('vanished');
    expect(compareFileIdentity(opened, { dev: 1n, ino: 8n })).toBe('replaced');
    expect(compareFileIdentity(opened, { dev: 2n, ino: 7n })).toBe('replaced');
  });
});

describe('the key file rule', () => {
  it('makes a key only beside a database that holds no sealed secret', () => {
    expect(keyFileAction(true, true)).toBe('open');
    expect(keyFileAction(true, false)).toBe('open');
    expect(keyFileAction(false, false)).toBe('create');
    expect(keyFileAction(false, true)).toBe('refuse-missing');
  });
});
