/**
 * What the webhook outbox costs a message on SQLite, on a real file: a batch's deliveries are one
 * UPDATE, the state indexes hold only the pending and the dead rows (and every query that reads them
 * is planned on them), and the sender reads each queued row about once however long it holds it,
 * while a row pending again under an old id (a replay from another process) is still found.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DUE_AFTER_SQL, DUE_EXCEPT_SQL } from '../../src/store/sqlite/webhook-outbox-cursor.js';
import { DELIVERED_SQL, DUE_SQL, recordAttempts, type AttemptRecord, type DueOutboxRow } from '../../src/store/sqlite/webhook-store.js';
import { enqueueDeliveryReceipts, WebhookSender, type WebhookSenderConfig } from '../../src/webhooks/index.js';
import type { UnleasedRead } from '../../src/webhooks/outbox.js';
import { SqliteWebhookOutbox } from '../../src/webhooks/sqlite/outbox.js';
import { queryPlan } from '../support/query-plan.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { openWebhookFixture, type WebhookFixture } from './fixture.js';

const FAST: Partial<WebhookSenderConfig> = { timeoutMs: 2_000, retryDelaysMs: [20, 40, 80], breakerOpenMs: 60_000, breakerFailures: 100, concurrency: 8 };
const WAIT = { timeout: 20_000, interval: 10 };

/** The real SQLite outbox, counting the rows its reads return. */
class CountingOutbox extends SqliteWebhookOutbox {
  rowsRead = 0;

  override claimDue(nowMs: number, maxRows: number, leaseMs?: number, read?: UnleasedRead): DueOutboxRow[] {
    const rows = super.claimDue(nowMs, maxRows, leaseMs, read);
    this.rowsRead += rows.length;
    return rows;
  }
}

describe('webhook outbox on SQLite: writes and reads a message', () => {
  let fx: WebhookFixture;
  let clientId: number;
  const closers: (() => Promise<void> | void)[] = [];

  /** Queues `n` receipts due at nowMs in one statement batch, as the engine does; returns their ids. */
  const queue = (n: number, nowMs = Date.now()): number[] => {
    const before = Number(fx.store.db.prepare('SELECT COALESCE(MAX(id), 0) FROM webhook_outbox').pluck().get());
    const events = Array.from({ length: n }, (_, i) => {
      const msisdn = `3538${String(before + i).padStart(8, '0')}`;
      return { clientId, recipientId: fx.addRecipient(clientId, msisdn), to: msisdn, from: 'Gate', status: 'DELIVRD', clientReference: null };
    });
    enqueueDeliveryReceipts(fx.store.db, events, nowMs);
    return (fx.store.db.prepare('SELECT id FROM webhook_outbox WHERE id > ? ORDER BY id').pluck().all(before) as number[]);
  };

  beforeEach(async () => {
    fx = await openWebhookFixture();
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await fx.close();
  });

  it('writes a batch of 200 deliveries as one UPDATE per attempt count, stamped with its latest answer, leaving rows no longer pending alone', () => {
    clientId = fx.addClient('acme', { url: 'http://127.0.0.1:9/hook', secret: 's' });
    const ids = queue(202);
    const [retried, replayedAway] = ids.slice(200) as [number, number];
    fx.store.db.prepare(`UPDATE webhook_outbox SET state = 'dead', dead_at = 1 WHERE id = ?`).run(replayedAway);
    // The gateway's connection as the results are written on it, with every statement it runs logged.
    const statements: string[] = [];
    const db = new Database(fx.dbPath, { verbose: (sql) => statements.push(String(sql)) });
    closers.push(() => void db.close());
    const records: AttemptRecord[] = [
      // 196 at their first attempt, 4 at their second (retried earlier), answered over 200 ms.
      ...ids.slice(0, 200).map((id, i): AttemptRecord => ({ id, kind: 'delivered', attempts: i % 50 === 7 ? 2 : 1, atMs: 5_000 + i })),
      { id: retried, kind: 'retry', attempts: 1, nextAttemptAt: 9_000, lastError: 'HTTP_503' },
      { id: replayedAway, kind: 'delivered', attempts: 1, atMs: 5_100 },
    ];
    recordAttempts(db, records);

    const updates = statements.filter((sql) => /^\s*UPDATE/i.test(sql));
    expect(updates.filter((sql) => sql.includes(`state = 'delivered'`))).toHaveLength(2);
    expect(updates).toHaveLength(3);
    ids.slice(0, 200).forEach((id, i) => expect(fx.row(id)).toMatchObject(i % 50 === 7
      ? { state: 'delivered', attempts: 2, delivered_at: 5_157 }
      : { state: 'delivered', attempts: 1, delivered_at: 5_199 }));
    expect(fx.row(retried)).toMatchObject({ state: 'pending', attempts: 1, next_attempt_at: 9_000, last_error: 'HTTP_503' });
    expect(fx.row(replayedAway)).toMatchObject({ state: 'dead', delivered_at: null });
    // No BEGIN/COMMIT per row: one transaction, and the connection's level put back.
    expect(statements.filter((sql) => /^\s*COMMIT/i.test(sql))).toHaveLength(1);
    expect(db.pragma('synchronous', { simple: true })).toBe(fx.store.db.pragma('synchronous', { simple: true }));
  });

  it('keeps only pending rows in webhook_outbox_due and dead rows in webhook_outbox_dead, and plans every query on them or the primary key', () => {
    clientId = fx.addClient('acme', { url: 'http://127.0.0.1:9/hook', secret: 's' });
    const db = fx.store.db;
    const indexSql = (name: string) => db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`).pluck().get(name) as string;
    expect(indexSql('webhook_outbox_due')).toMatch(/ON webhook_outbox\(next_attempt_at\) WHERE state = 'pending'$/);
    expect(indexSql('webhook_outbox_dead')).toMatch(/ON webhook_outbox\(client_id, dead_at\) WHERE state = 'dead'$/);
    const ids = queue(300, 1_000);
    recordAttempts(db, ids.slice(0, 290).map((id): AttemptRecord => ({ id, kind: 'delivered', attempts: 1, atMs: 2_000 })));
    recordAttempts(db, ids.slice(290, 295).map((id): AttemptRecord => ({ id, kind: 'dead', attempts: 1, atMs: 2_000, lastError: 'HTTP_400', reason: 'permanent', url: null })));
    // A delivered row is in neither index: 5 pending and 5 dead entries for 300 rows.
    expect(db.prepare(`SELECT COUNT(*) FROM webhook_outbox INDEXED BY webhook_outbox_due WHERE state = 'pending'`).pluck().get()).toBe(5);
    expect(db.prepare(`SELECT COUNT(*) FROM webhook_outbox INDEXED BY webhook_outbox_dead WHERE state = 'dead'`).pluck().get()).toBe(5);

    const plan = (sql: string, ...params: unknown[]) => queryPlan(db, sql, ...params).join(' | ');
    const expectPlans = () => {
      expect(plan(DUE_SQL, 5_000, 10)).toMatch(/^SEARCH o USING INDEX webhook_outbox_due \(next_attempt_at<\?\)/);
      expect(plan(DUE_SQL, 5_000, 10)).not.toMatch(/TEMP B-TREE/);
      expect(plan(DUE_EXCEPT_SQL, 5_000, '[1,2]', 10)).toMatch(/^SEARCH o USING INDEX webhook_outbox_due \(next_attempt_at<\?\)/);
      expect(plan(DUE_AFTER_SQL, 100, 5_000, 10)).toMatch(/^SEARCH o USING INTEGER PRIMARY KEY \(rowid>\?\)/);
      expect(plan(DUE_AFTER_SQL, 100, 5_000, 10)).not.toMatch(/TEMP B-TREE/);
      expect(plan(DELIVERED_SQL, 1, 1_000, '[1,2]')).toMatch(/^SEARCH webhook_outbox USING INTEGER PRIMARY KEY \(rowid=\?\) \| LIST SUBQUERY/);
      expect(plan(`SELECT MIN(next_attempt_at) FROM webhook_outbox WHERE state = 'pending'`)).toBe('SEARCH webhook_outbox USING COVERING INDEX webhook_outbox_due');
      expect(plan(`SELECT COUNT(*) FROM webhook_outbox WHERE state = 'pending'`)).toBe('SCAN webhook_outbox USING COVERING INDEX webhook_outbox_due');
      expect(plan(`SELECT COUNT(*) FROM webhook_outbox WHERE state = 'dead'`)).toBe('SCAN webhook_outbox USING COVERING INDEX webhook_outbox_dead');
      expect(plan(`SELECT COUNT(*) FROM webhook_outbox o WHERE o.client_id = ? AND o.state = 'pending'`, 1)).toMatch(/USING (COVERING )?INDEX webhook_outbox_due/);
      expect(plan(`SELECT o.id FROM webhook_outbox o WHERE o.state = 'dead' AND o.client_id = ? AND o.dead_at >= ? ORDER BY o.dead_at, o.id`, 1, 0))
        .toMatch(/USING COVERING INDEX webhook_outbox_dead \(client_id=\? AND dead_at>\?\)/);
    };
    expectPlans();
    // Statistics make the planner weigh the small pending index against the primary key: the plans hold.
    db.exec('ANALYZE');
    expectPlans();
  });

  it('reads each queued row about once while it holds rows in flight and awaiting their write, and sends each once', async () => {
    const receiver = await WebhookReceiver.start({ secret: 'whsec', keepBodies: false, defaultResponse: { kind: 'status', statusCode: 200, delayMs: 15 } });
    closers.push(() => receiver.close());
    clientId = fx.addClient('acme', { url: receiver.url, secret: 'whsec' });
    const outbox = new CountingOutbox(fx.store.db);
    const sender = new WebhookSender({ outbox, secretBox: fx.secretBox, logger: fx.logger, config: FAST, pollIntervalMs: 20, flushIntervalMs: 25 });
    closers.push(() => sender.stop());
    sender.start();
    const ids: number[] = [];
    // New rows keep coming while some are still out, as receipts do during a campaign.
    for (let batch = 0; batch < 12; batch++) {
      ids.push(...queue(50));
      sender.wake();
      await vi.waitFor(() => expect(receiver.count).toBeGreaterThanOrEqual(batch * 40), WAIT);
    }
    await vi.waitFor(() => expect(fx.store.db.prepare(`SELECT COUNT(*) FROM webhook_outbox WHERE state = 'delivered'`).pluck().get()).toBe(600), WAIT);
    expect(receiver.count).toBe(600);
    expect(sender.stats().delivered).toBe(600);
    // Every read used to return the rows held (in flight, awaiting their write) again: three a row.
    expect(outbox.rowsRead).toBeGreaterThanOrEqual(600);
    expect(outbox.rowsRead).toBeLessThanOrEqual(610);
  });

  it('sends a row pending again under an old id (a replay by another process, no wake) within the poll interval', async () => {
    const receiver = await WebhookReceiver.start({ secret: 'whsec' });
    closers.push(() => receiver.close());
    clientId = fx.addClient('acme', { url: receiver.url, secret: 'whsec' });
    const sender = new WebhookSender({ store: fx.store, secretBox: fx.secretBox, logger: fx.logger, config: FAST, pollIntervalMs: 50, flushIntervalMs: 1 });
    closers.push(() => sender.stop());
    sender.start();
    const ids = queue(20);
    sender.wake();
    await vi.waitFor(() => expect(fx.store.db.prepare(`SELECT COUNT(*) FROM webhook_outbox WHERE state = 'delivered'`).pluck().get()).toBe(20), WAIT);
    const [old] = ids as [number];
    // Newer rows too, so the sender's cursor is past the old one when it comes back.
    const newer = queue(5);
    sender.wake();
    await vi.waitFor(() => expect(newer.map((id) => fx.row(id).state)).toEqual(newer.map(() => 'delivered')), WAIT);
    const other = new Database(fx.dbPath);
    closers.push(() => void other.close());
    other.prepare(`UPDATE webhook_outbox SET state = 'pending', attempts = 0, next_attempt_at = ?, delivered_at = NULL WHERE id = ?`).run(Date.now(), old);
    await vi.waitFor(() => expect(fx.row(old).state).toBe('delivered'), WAIT);
    expect(receiver.count).toBe(26);
    const eventId = fx.row(old).event_id;
    expect(receiver.requests.filter((r) => r.headers['x-event-id'] === eventId)).toHaveLength(2);
  });
});
