/**
 * A real SQLite file in a temp dir with the schema applied, and an AuthService over it whose clock
 * the test moves. scrypt runs at a low cost here (the stored hash carries its cost, so the code
 * path is the production one).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthService } from '../../src/auth/index.js';
import { resolveConfigFromObject } from '../../src/gateway/config.js';
import type { AuthConfig } from '../../src/config/types.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { sqliteStorePorts, type StorePorts } from '../../src/store/store-ports.js';

export const TEST_SCRYPT_COST = { N: 1024, r: 8, p: 1 };
export const START_MS = Date.UTC(2026, 0, 15, 12, 0, 0);

export interface AuthFixture {
  dir: string;
  dbPath: string;
  store: Store;
  /** The auth store's async port over `store`, as AuthService.create takes it. */
  authStore: StorePorts['auth'];
  secretBox: SecretBox;
  auth: AuthService;
  config: AuthConfig;
  clock: { nowMs: number };
  /** Another AuthService on the same files, as a second process would have. */
  reopen(): Promise<AuthService>;
  close(): Promise<void>;
}

export async function createAuthFixture(authOverrides: Record<string, unknown> = {}): Promise<AuthFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-auth-'));
  const dbPath = join(dir, 'smsgate.sqlite');
  const config = resolveConfigFromObject({ database: { path: dbPath }, auth: authOverrides }, 'test', {}).auth;
  const store = await openStore({ path: dbPath, synchronous: 'NORMAL' });
  const secretBox = SecretBox.fromKeyFile(join(dir, 'smsgate.key'));
  const clock = { nowMs: START_MS };
  const options = { now: () => clock.nowMs, scryptCost: TEST_SCRYPT_COST };
  const authStore = sqliteStorePorts(store).auth;
  const auth = await AuthService.create(authStore, config, secretBox, options);
  const opened: Store[] = [store];
  return {
    dir, dbPath, store, authStore, secretBox, auth, config, clock,
    async reopen() {
      const other = await openStore({ path: dbPath, synchronous: 'NORMAL' });
      opened.push(other);
      return AuthService.create(sqliteStorePorts(other).auth, config, SecretBox.fromKeyFile(join(dir, 'smsgate.key')), options);
    },
    async close() {
      for (const s of opened) await s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A client "acme" with an administrator "alice" (password "correct horse") and a plain user "bob". */
export async function seedAccounts(auth: AuthService): Promise<void> {
  await auth.createClient({ name: 'acme' });
  await auth.createUser({ clientName: 'acme', username: 'alice', password: 'correct horse', isAdmin: true });
  await auth.createUser({ clientName: 'acme', username: 'bob', password: 'battery staple', isAdmin: false });
}
