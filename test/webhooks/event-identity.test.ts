/**
 * Every outbox event has an X-Event-Id (a UUID on the row), dead
 * letters record why they died, and redrive picks an endpoint's transient dead letters within the
 * window. Includes a database migrated from before these columns existed.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { QueryRunner } from 'typeorm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InitialSchema1763740000000 } from '../../migrations/1763740000000-initial-schema.js';
import { MessagePartsClaimIndex1763900000000 } from '../../migrations/1763900000000-message-parts-claim-index.js';
import { WebhookEventIdentity1764200000001 } from '../../migrations/1764200000001-webhook-event-identity.js';
import { WebhookEventIdUnindexed1764200000002 } from '../../migrations/1764200000002-webhook-event-id-unindexed.js';
import {
  listDeadLetters, listRedriveEndpoints, recordAttempts, redriveDeadLetters, requeueDeadLetters, requeueProbe,
} from '../../src/store/sqlite/webhook-store.js';
import { enqueueDeliveryReceipt } from '../../src/webhooks/index.js';
import { openWebhookFixture, type WebhookFixture } from './fixture.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('migrations 1764200000001-2 on a database from before them', () => {
  let dir: string;
  let db: Database.Database;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'smsgate-event-id-'));
    db = new Database(join(dir, 'old.sqlite'));
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // The migrations ask the runner's driver which dialect they run on (migrations/dialect.ts).
  const runner = { query: async (sql: string) => void db.exec(sql), connection: { driver: { options: { type: 'better-sqlite3' } } } } as unknown as QueryRunner;

  it('gives every existing row its own event id and classifies old dead letters from last_error', async () => {
    await new InitialSchema1763740000000().up(runner);
    await new MessagePartsClaimIndex1763900000000().up(runner);
    db.prepare(`INSERT INTO clients (id, name, webhook_url, created_at) VALUES (1, 'acme', 'http://127.0.0.1:9/hook', 0)`).run();
    const insert = db.prepare(`INSERT INTO webhook_outbox (client_id, body, state, attempts, next_attempt_at, last_error, created_at, dead_at)
                               VALUES (1, '{}', ?, 1, 0, ?, 0, ?)`);
    const dead: Record<string, 'transient' | 'permanent'> = {
      HTTP_500: 'transient', HTTP_503: 'transient', HTTP_599: 'transient', HTTP_404: 'transient', HTTP_408: 'transient',
      ECONNREFUSED: 'transient', ECONNRESET: 'transient', TIMEOUT: 'transient', CIRCUIT_OPEN: 'transient',
      HTTP_400: 'permanent', HTTP_401: 'permanent', HTTP_403: 'permanent', HTTP_410: 'permanent', HTTP_429: 'permanent', HTTP_302: 'permanent',
      HTTP_5000: 'permanent', NO_WEBHOOK_URL: 'permanent', SECRET_UNREADABLE: 'permanent', INVALID_URL: 'permanent',
    };
    for (const lastError of Object.keys(dead)) insert.run('dead', lastError, 10);
    insert.run('pending', null, null);
    insert.run('delivered', null, null);

    await new WebhookEventIdentity1764200000001().up(runner);

    const rows = db.prepare('SELECT state, last_error, event_id, dead_reason, dead_url FROM webhook_outbox ORDER BY id').all() as
      { state: string; last_error: string | null; event_id: string; dead_reason: string | null; dead_url: string | null }[];
    expect(rows).toHaveLength(Object.keys(dead).length + 2);
    for (const r of rows) expect(r.event_id).toMatch(UUID);
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(rows.length);
    for (const r of rows.filter((x) => x.state === 'dead')) {
      expect([r.last_error, r.dead_reason]).toEqual([r.last_error, dead[r.last_error as string]]);
      expect(r.dead_url).toBe('http://127.0.0.1:9/hook');
    }
    expect(rows.filter((r) => r.state !== 'dead').map((r) => [r.dead_reason, r.dead_url])).toEqual([[null, null], [null, null]]);

    // 1764200000002 takes the trigger and the unique index off the enqueue path again.
    await new WebhookEventIdUnindexed1764200000002().up(runner);
    const triggersAndIndexes = () => db.prepare(`SELECT name FROM sqlite_master WHERE tbl_name = 'webhook_outbox' AND type IN ('trigger', 'index') ORDER BY name`).pluck().all();
    expect(triggersAndIndexes()).toEqual(['webhook_outbox_dead', 'webhook_outbox_due', 'webhook_outbox_redrive']);
    const id = Number(insert.run('pending', null, null).lastInsertRowid);
    expect(db.prepare('SELECT event_id FROM webhook_outbox WHERE id = ?').pluck().get(id)).toBeNull();
    expect(() => db.prepare(`UPDATE webhook_outbox SET dead_reason = 'maybe' WHERE id = ?`).run(id)).toThrow(/CHECK/);

    await new WebhookEventIdUnindexed1764200000002().down(runner);
    expect(triggersAndIndexes()).toEqual(['webhook_outbox_dead', 'webhook_outbox_due', 'webhook_outbox_event_id', 'webhook_outbox_event_id_default', 'webhook_outbox_redrive']);
    await new WebhookEventIdentity1764200000001().down(runner);
    expect(db.prepare(`SELECT COUNT(*) FROM pragma_table_info('webhook_outbox') WHERE name IN ('event_id', 'dead_reason', 'dead_url')`).pluck().get()).toBe(0);
  });
});

describe('webhook outbox identity and redrive selection', () => {
  let fx: WebhookFixture;
  let clientId: number;
  const URL_A = 'http://127.0.0.1:9/hook';
  const queue = (msisdn: string, createdAtMs: number, client = clientId) => {
    const recipientId = fx.addRecipient(client, msisdn);
    enqueueDeliveryReceipt(fx.store.db, { clientId: client, recipientId, to: msisdn, from: 'Gate', status: 'DELIVRD', clientReference: null }, createdAtMs);
    return Number(fx.store.db.prepare('SELECT MAX(id) FROM webhook_outbox').pluck().get());
  };
  const die = (id: number, atMs: number, reason: 'transient' | 'permanent', url: string | null = URL_A) =>
    recordAttempts(fx.store.db, [{ id, kind: 'dead', attempts: 4, atMs, lastError: reason === 'transient' ? 'HTTP_503' : 'HTTP_400', reason, url }]);
  beforeEach(async () => {
    fx = await openWebhookFixture();
    clientId = fx.addClient('acme', { url: URL_A, secret: 's' });
  });
  afterEach(async () => {
    await fx.close();
  });

  it('stores a new UUID per event at enqueue and keeps it through a replay', () => {
    const a = queue('353870000001', 0);
    const b = queue('353870000002', 0);
    expect(fx.row(a).event_id).toMatch(UUID);
    expect(fx.row(b).event_id).toMatch(UUID);
    expect(fx.row(a).event_id).not.toBe(fx.row(b).event_id);
    const before = fx.row(a).event_id;
    die(a, 100, 'permanent');
    expect(fx.row(a)).toMatchObject({ dead_reason: 'permanent', dead_url: URL_A });
    expect(listDeadLetters(fx.store.db)[0]).toMatchObject({ id: a, eventId: before, deadReason: 'permanent' });
    expect(requeueDeadLetters(fx.store.db, { clientId }, 200)).toEqual([a]);
    expect(fx.row(a)).toMatchObject({ state: 'pending', attempts: 0, event_id: before, dead_reason: null, dead_url: null });
  });

  it('redrives only transient dead letters of that client and URL, created and dead within the window, as fresh series', () => {
    const other = fx.addClient('other', { url: URL_A });
    const NOW = 100_000_000;
    const WINDOW = 86_400_000;
    const cutoffMs = NOW - WINDOW;
    const inWindow = queue('353870000011', cutoffMs);
    const createdTooEarly = queue('353870000012', cutoffMs - 1);
    const permanent = queue('353870000013', cutoffMs + 10);
    const otherUrl = queue('353870000014', cutoffMs + 10);
    const otherClient = queue('353870000015', cutoffMs + 10, other);
    const pending = queue('353870000016', cutoffMs + 10);
    die(inWindow, cutoffMs + 5, 'transient');
    die(createdTooEarly, cutoffMs + 5, 'transient');
    die(permanent, cutoffMs + 20, 'permanent');
    die(otherUrl, cutoffMs + 20, 'transient', 'http://127.0.0.1:9/elsewhere');
    die(otherClient, cutoffMs + 20, 'transient');
    expect(listRedriveEndpoints(fx.store.db, cutoffMs)).toEqual(expect.arrayContaining([
      { clientId, url: URL_A }, { clientId, url: 'http://127.0.0.1:9/elsewhere' }, { clientId: other, url: URL_A },
    ]));
    expect(listRedriveEndpoints(fx.store.db, cutoffMs)).toHaveLength(3);
    // The probe is the oldest redrivable one, alone.
    expect(requeueProbe(fx.store.db, { clientId, url: URL_A, cutoffMs }, NOW)).toBe(inWindow);
    expect(fx.row(inWindow)).toMatchObject({ state: 'pending', attempts: 0, next_attempt_at: NOW, last_error: null, dead_at: null, dead_reason: null });
    die(inWindow, NOW - 10, 'transient');
    expect(redriveDeadLetters(fx.store.db, { clientId, url: URL_A, cutoffMs }, NOW)).toBe(1);
    expect(fx.row(inWindow)).toMatchObject({ state: 'pending', attempts: 0, next_attempt_at: NOW });
    for (const id of [createdTooEarly, permanent, otherUrl, otherClient]) expect(fx.row(id).state).toBe('dead');
    expect(fx.row(pending).state).toBe('pending');
    expect(requeueProbe(fx.store.db, { clientId, url: URL_A, cutoffMs }, NOW)).toBeNull();
  });

  it('does not redrive a dead letter that died before the window even if created inside it (clock stepped back)', () => {
    const NOW = 100_000_000;
    const cutoffMs = NOW - 1_000;
    const id = queue('353870000021', cutoffMs + 10);
    die(id, cutoffMs - 1, 'transient');
    expect(redriveDeadLetters(fx.store.db, { clientId, url: URL_A, cutoffMs }, NOW)).toBe(0);
  });
});
