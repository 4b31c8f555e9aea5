/** A real SQLite file with clients, a SecretBox, and helpers to read the outbox back. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/common/log.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import type { WebhookOutboxRow } from '../../src/store/entities.js';
import { SecretBox } from '../../src/store/secret-box.js';

export interface LogLine { level: number; msg: string; [key: string]: unknown }

export interface WebhookFixture {
  dir: string;
  dbPath: string;
  store: Store;
  secretBox: SecretBox;
  logger: Logger;
  logs: LogLine[];
  addClient(name: string, webhook: { url: string | null; secret?: string | null }): number;
  setWebhook(clientId: number, url: string | null, secret?: string | null): void;
  addRecipient(clientId: number, msisdn: string, clientReference?: string | null): number;
  outbox(): WebhookOutboxRow[];
  row(id: number): WebhookOutboxRow;
  close(): Promise<void>;
}

export async function openWebhookFixture(): Promise<WebhookFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-webhooks-'));
  const dbPath = join(dir, 'gate.sqlite');
  const store = await openStore({ path: dbPath, synchronous: 'NORMAL' });
  const secretBox = SecretBox.fromKey(randomBytes(32));
  const logs: LogLine[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logs.push(JSON.parse(line) as LogLine);
      callback();
    },
  });
  const logger = createLogger({ level: 'debug', destination });
  const db = store.db;
  let campaignSeq = 0;
  return {
    dir, dbPath, store, secretBox, logger, logs,
    addClient(name, webhook) {
      const enc = webhook.secret === undefined || webhook.secret === null ? null : secretBox.seal(webhook.secret);
      return Number(db.prepare(`INSERT INTO clients (name, webhook_url, webhook_secret_enc, created_at) VALUES (?, ?, ?, ?)`)
        .run(name, webhook.url, enc, Date.now()).lastInsertRowid);
    },
    setWebhook(clientId, url, secret) {
      const enc = secret === undefined || secret === null ? null : secretBox.seal(secret);
      db.prepare(`UPDATE clients SET webhook_url = ?, webhook_secret_enc = ? WHERE id = ?`).run(url, enc, clientId);
    },
    addRecipient(clientId, msisdn, clientReference = null) {
      const campaignId = `00000000-0000-4000-8000-${String(++campaignSeq).padStart(12, '0')}`;
      db.prepare(`INSERT INTO campaigns (id, client_id, state, name, sender, text, created_at) VALUES (?, ?, 'ready', 'API Broadcast', 'Gate', 'hi', 0)`)
        .run(campaignId, clientId);
      return Number(db.prepare(`INSERT INTO recipients (campaign_id, msisdn, client_reference) VALUES (?, ?, ?)`)
        .run(campaignId, msisdn, clientReference).lastInsertRowid);
    },
    outbox() {
      return db.prepare(`SELECT * FROM webhook_outbox ORDER BY id`).all() as WebhookOutboxRow[];
    },
    row(id) {
      return db.prepare(`SELECT * FROM webhook_outbox WHERE id = ?`).get(id) as WebhookOutboxRow;
    },
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
