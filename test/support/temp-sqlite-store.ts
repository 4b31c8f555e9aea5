/**
 * A real SQLite store (the gateway's schema, migrated) in a directory of its own for a test: the
 * opener this returns makes one, and every store it made is closed and its directory removed after
 * the test, whether the test passed or not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { openStore, type Store, type StoreOptions } from '../../src/store/sqlite/database.js';

export type OpenTempStore = (options?: Omit<StoreOptions, 'path'>) => Promise<Store>;

/** Call at a file's top level (it registers an afterEach); `name` goes in the directory's name. */
export function useTempSqliteStore(name: string): OpenTempStore {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return async (options = {}) => {
    const dir = mkdtempSync(join(tmpdir(), `smsgate-${name}-`));
    dirs.push(dir);
    const store = await openStore({ ...options, path: join(dir, 'smsgate.sqlite') });
    stores.push(store);
    return store;
  };
}
