import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyMigrations, openStore, type Store } from '../../src/store/sqlite/database.js';
import { SecretBox, defaultKeyFileFor } from '../../src/store/secret-box.js';

describe('store', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'smsgate-store-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('creates the file, applies every migration once, and sets WAL, foreign keys and the busy timeout', async () => {
    const path = join(tempDir(), 'nested', 'gate.sqlite');
    const store = await openStore({ path });
    stores.push(store);
    expect(statSync(path).isFile()).toBe(true);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    expect(store.db.pragma('temp_store', { simple: true })).toBe(2); // MEMORY: a statement's sorts never spill to temp files
    const tables = store.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all();
    expect(tables).toEqual(expect.arrayContaining([
      'campaigns', 'clients', 'inbound_messages', 'message_parts', 'personal_access_tokens', 'receipts',
      'recipients', 'refresh_sessions', 'senders', 'signing_keys', 'users', 'webhook_outbox',
    ]));
    expect(await applyMigrations(store)).toEqual([]);
  });

  it('rejects a row that breaks a foreign key', async () => {
    const store = await openStore({ path: join(tempDir(), 'fk.sqlite') });
    stores.push(store);
    expect(() => store.db.prepare(`INSERT INTO users (client_id, username, password_hash, created_at) VALUES (999, 'u', 'h', 0)`).run())
      .toThrow(/FOREIGN KEY/);
  });

  it('seals and opens a secret with the key file, and another key cannot open it', () => {
    const keyFile = defaultKeyFileFor(join(tempDir(), 'gate.sqlite'));
    expect(keyFile.endsWith('gate.key')).toBe(true);
    const box = SecretBox.fromKeyFile(keyFile);
    const sealed = box.seal('webhook-secret');
    expect(sealed).not.toContain('webhook-secret');
    expect(SecretBox.fromKeyFile(keyFile).open(sealed)).toBe('webhook-secret');
    expect((statSync(keyFile).mode & 0o777).toString(8)).toBe('600');
    expect(() => SecretBox.fromKeyFile(':memory:').open(sealed)).toThrow(/does not open/);
  });
});
