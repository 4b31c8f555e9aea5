/**
 * The hot tables' indexes on SQLite hold only the rows a query looks for (migrations/
 * 1766400000001-live-row-indexes.ts): a part is in the claim index while queued, in the submitting
 * index while submitting, in the message-id index once it has a carrier id; a recipient is in the
 * dispatch index while waiting; a receipt in the pending index while unmatched. Checked on the
 * index B-trees themselves (dbstat: the entries each holds) as a part goes through its life, on
 * the query plans of the very statements the stores run (each on its index, none scanning the
 * table), and on the batch updates of a commit (one statement for many rows, the per-row guards
 * kept).
 */
import { describe, expect, it } from 'vitest';
import type { QueryRunner } from 'typeorm';
import { LiveRowIndexes1766400000001 } from '../../migrations/1766400000001-live-row-indexes.js';
import { MultiRowUpdate } from '../../src/store/sqlite/multi-row-update.js';
import type { Store } from '../../src/store/sqlite/database.js';
import { DispatchStore } from '../../src/store/sqlite/dispatch-store.js';
import { PART_CHANGE_SQL } from '../../src/store/sqlite/part-change-queries.js';
import { ROW_UPDATES_SQL, SqlitePartWrites } from '../../src/store/sqlite/part-writes.js';
import { RECOVERY_SQL } from '../../src/store/sqlite/recovery-queries.js';
import { READ_QUEUED } from '../../src/store/sqlite/reroute-queries.js';
import { STATUS_PART_SQL, StatusQueries } from '../../src/store/sqlite/status-store.js';
import { queryPlan } from '../support/query-plan.js';
import { useTempSqliteStore } from '../support/temp-sqlite-store.js';

const openTempStore = useTempSqliteStore('live-indexes');

type Db = Store['db'];

async function openDb(): Promise<Db> {
  const store = await openTempStore({ synchronous: 'NORMAL' });
  store.db.prepare(`INSERT INTO clients (id, name, active, created_at) VALUES (1, 'c', 1, 0)`).run();
  store.db.prepare(
    `INSERT INTO campaigns (id, client_id, state, name, sender, text, send_at, text_sent, encoding, parts_per_message, total_sent, skipped_count, created_at, ready_at)
     VALUES ('a', 1, 'ready', 'n', 'Acme', 't', 0, 't', 'GSM7', 1, 0, 0, 0, 0)`,
  ).run();
  return store.db;
}

/** `count` waiting recipients of campaign 'a', each with one queued part on transport 'up'; the parts' ids. */
function seedParts(db: Db, count: number): number[] {
  const dispatch = new DispatchStore(db);
  const ids: number[] = [];
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const recipientId = Number(db.prepare(`INSERT INTO recipients (campaign_id, msisdn) VALUES ('a', ?)`).run(`3538700${i}`).lastInsertRowid);
      dispatch.insertPart({ recipientId, campaignId: 'a', partNumber: 1, partsTotal: 1, concatReference: 0, transport: 'up', state: 'queued', lastStatus: null, nextAttemptAt: 0, finalAt: null }, 0);
      ids.push(Number(db.prepare('SELECT id FROM message_parts WHERE recipient_id = ?').pluck().get(recipientId)));
    }
  })();
  return ids;
}

/** The entries an index's B-tree holds (every cell of every page: an index B-tree keeps keys in its interior pages too). */
function entries(db: Db, index: string): number {
  return db.prepare(`SELECT COALESCE(SUM(ncell), 0) FROM dbstat WHERE name = ?`).pluck().get(index) as number;
}

function indexEntries(db: Db): Record<string, number> {
  return Object.fromEntries(['message_parts_fair_claim', 'message_parts_submitting', 'message_parts_message_id', 'recipients_dispatch', 'receipts_pending']
    .map((name) => [name, entries(db, name)]));
}

const receipt = { transport: 'up', status: 'DELIVRD', final: true, errorCode: null, doneAt: null, raw: 'r', receivedAt: 0 } as const;

describe('live-row indexes of parts, recipients and receipts on SQLite', () => {
  it('replaces the full indexes by partial ones and drops message_parts_due', async () => {
    const db = await openDb();
    const sql = Object.fromEntries((db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`).all() as { name: string; sql: string }[])
      .map((row) => [row.name, row.sql]));
    expect(sql['message_parts_due']).toBeUndefined();
    expect(sql['message_parts_fair_claim']).toMatch(/WHERE state = 'queued'$/);
    expect(sql['message_parts_submitting']).toMatch(/ON message_parts\(transport\) WHERE state = 'submitting'$/);
    expect(sql['message_parts_message_id']).toMatch(/WHERE message_id IS NOT NULL$/);
    expect(sql['recipients_dispatch']).toMatch(/WHERE dispatch_state = 'waiting'$/);
    expect(sql['receipts_pending']).toMatch(/WHERE match_state = 'pending'$/);
    expect(sql['recipients_status']).toBe('CREATE INDEX recipients_status ON recipients(campaign_id, status)');
  });

  it('goes back to the full indexes and forward again', async () => {
    const db = await openDb();
    const runner = { query: (text: string) => Promise.resolve(db.exec(text)) } as unknown as QueryRunner;
    const indexSql = (): Record<string, string> => Object.fromEntries((db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`)
      .all() as { name: string; sql: string }[]).map((row) => [row.name, row.sql]));
    const after = indexSql();
    await new LiveRowIndexes1766400000001().down(runner);
    const before = indexSql();
    expect(before['message_parts_due']).toBe('CREATE INDEX message_parts_due ON message_parts(state, next_attempt_at)');
    expect(before['message_parts_submitting']).toBeUndefined();
    for (const name of ['message_parts_fair_claim', 'message_parts_message_id', 'recipients_dispatch', 'receipts_pending']) expect(before[name]).not.toMatch(/WHERE/);
    await new LiveRowIndexes1766400000001().up(runner);
    expect(indexSql()).toEqual(after);
  });

  it('holds a part only while it is queued, submitting or has a message id, a recipient while waiting, a receipt while unmatched', async () => {
    const db = await openDb();
    const dispatch = new DispatchStore(db);
    const writes = new SqlitePartWrites(db);
    const ids = seedParts(db, 5);
    expect(indexEntries(db)).toEqual({
      message_parts_fair_claim: 5, message_parts_submitting: 0, message_parts_message_id: 0, recipients_dispatch: 5, receipts_pending: 0,
    });
    const recipientIds = db.prepare('SELECT id FROM recipients ORDER BY id').pluck().all() as number[];
    dispatch.markRecipientsDispatched(recipientIds, 1);
    expect(dispatch.markManySubmitting(ids.slice(0, 3), 1)).toEqual(new Set(ids.slice(0, 3)));
    expect(indexEntries(db)).toEqual({
      message_parts_fair_claim: 2, message_parts_submitting: 3, message_parts_message_id: 0, recipients_dispatch: 0, receipts_pending: 0,
    });
    expect(new StatusQueries(db).queuedPartsByTransport(['up'])).toEqual([{ transport: 'up', queued: 2, submitting: 3 }]);
    db.transaction(() => writes.markSubmitted(ids.slice(0, 3).map((partId) => ({ partId, messageId: `m${partId}` })), 2))();
    expect(indexEntries(db)).toEqual({
      message_parts_fair_claim: 2, message_parts_submitting: 0, message_parts_message_id: 3, recipients_dispatch: 0, receipts_pending: 0,
    });
    // A final part keeps its message id entry (a late or duplicate receipt still finds it) and enters no other.
    db.transaction(() => writes.finishParts(ids.slice(0, 3).map((partId) => ({ partId, state: 'delivered' as const, status: 'DELIVRD', errorCode: null })), 3))();
    dispatch.insertReceipts([
      { ...receipt, messageId: `m${ids[0]}`, matchState: 'matched', partId: ids[0] ?? null },
      { ...receipt, messageId: 'not-yet', matchState: 'pending', partId: null },
    ]);
    expect(indexEntries(db)).toEqual({
      message_parts_fair_claim: 2, message_parts_submitting: 0, message_parts_message_id: 3, recipients_dispatch: 0, receipts_pending: 1,
    });
    const pending = db.prepare(`SELECT id FROM receipts WHERE match_state = 'pending'`).pluck().get() as number;
    dispatch.matchReceipt(pending, ids[1] as number);
    expect(entries(db, 'receipts_pending')).toBe(0);
    expect(new StatusQueries(db).queuedPartsByTransport(['up'])).toEqual([{ transport: 'up', queued: 2, submitting: 0 }]);
  });

  it('reads each live set through its partial index, never scanning the table', async () => {
    const db = await openDb();
    seedParts(db, 3);
    const plans: Record<string, string[]> = {
      targetParts: queryPlan(db, PART_CHANGE_SQL.targetParts, { transport: 'up', ids: '["m1"]' }),
      matchable: queryPlan(db, PART_CHANGE_SQL.matchable, 10),
      unmatchedOf: queryPlan(db, PART_CHANGE_SQL.unmatchedOf, 'up', '["m1"]'),
      queued: queryPlan(db, STATUS_PART_SQL.queued, 'up'),
      submitting: queryPlan(db, STATUS_PART_SQL.submitting, 'up'),
      unsent: queryPlan(db, STATUS_PART_SQL.unsentByCampaign),
      requeue: queryPlan(db, RECOVERY_SQL.requeueSubmitting, 1, null),
      rerouteAll: queryPlan(db, READ_QUEUED.all, { after: 0, limit: 10 }),
    };
    expect(plans['targetParts']).toContain('SEARCH message_parts USING COVERING INDEX message_parts_message_id (transport=? AND message_id=?)');
    expect(plans['matchable']).toContain('SEARCH r USING INDEX receipts_pending (match_state=?)');
    expect(plans['matchable']).toContain('SEARCH message_parts USING COVERING INDEX message_parts_message_id (transport=? AND message_id=?)');
    expect(plans['unmatchedOf']).toContain('SEARCH receipts USING INDEX receipts_pending (match_state=? AND transport=? AND message_id=?)');
    expect(plans['queued']).toEqual(['SEARCH message_parts USING COVERING INDEX message_parts_fair_claim (transport=? AND state=?)']);
    expect(plans['submitting']).toEqual(['SEARCH message_parts USING COVERING INDEX message_parts_submitting (transport=?)']);
    expect(plans['unsent']).toEqual(expect.arrayContaining([
      'SCAN message_parts USING INDEX message_parts_fair_claim', 'SCAN message_parts USING INDEX message_parts_submitting',
    ]));
    expect(plans['requeue']).toEqual(['SCAN message_parts USING INDEX message_parts_submitting']);
    // The oldest queued part from the claim index, then a rowid range: not a walk from the first part ever stored.
    expect(plans['rerouteAll']).toContain('SEARCH message_parts USING COVERING INDEX message_parts_fair_claim');
    for (const [name, plan] of Object.entries(plans)) {
      for (const line of plan) expect(line, `${name}: ${line}`).not.toMatch(/^SCAN (message_parts|receipts|recipients|p|r)$/);
    }
  });

  it('joins a batch update\'s rows to the table by primary key, whatever the batch size', async () => {
    const db = await openDb();
    for (const [name, sql] of Object.entries(ROW_UPDATES_SQL)) {
      for (const rows of [1, 2, 64]) {
        const text = MultiRowUpdate.text(sql, rows);
        const params = Array.from({ length: (text.match(/\?/g) ?? []).length }, (_, i) => i + 1);
        const plan = queryPlan(db, text, ...params);
        expect(plan, `${name} x${rows}`).toContainEqual(expect.stringMatching(/^SEARCH (message_parts|recipients) USING INTEGER PRIMARY KEY \(rowid=\?\)$/));
        expect(plan.filter((line) => /^SCAN (message_parts|recipients)\b/.test(line)), `${name} x${rows}`).toEqual([]);
      }
    }
  });

  it('updates a batch larger than one statement takes, and keeps each row\'s guard', async () => {
    const db = await openDb();
    const dispatch = new DispatchStore(db);
    const writes = new SqlitePartWrites(db);
    const ids = seedParts(db, 150);
    // Ten parts are still queued (never claimed): an acceptance does not move them.
    const claimed = ids.slice(10);
    dispatch.markManySubmitting(claimed, 1);
    const moved = db.transaction(() => writes.markSubmitted(ids.map((partId) => ({ partId, messageId: `m${partId}` })), 7))();
    expect(moved).toBe(140);
    const rows = db.prepare('SELECT id, state, message_id, attempts, submitted_at FROM message_parts ORDER BY id').all() as
      { id: number; state: string; message_id: string | null; attempts: number; submitted_at: number | null }[];
    expect(rows.filter((r) => r.state === 'queued').map((r) => r.id)).toEqual(ids.slice(0, 10));
    for (const r of rows.slice(10)) expect(r).toEqual({ id: r.id, state: 'submitted', message_id: `m${r.id}`, attempts: 1, submitted_at: 7 });

    // Five parts are final already: a later receipt does not overwrite them.
    db.transaction(() => writes.finishParts(claimed.slice(0, 5).map((partId) => ({ partId, state: 'undelivered' as const, status: 'UNDELIV', errorCode: '1' })), 8))();
    const finished = db.transaction(() => writes.finishParts(claimed.map((partId) => ({ partId, state: 'delivered' as const, status: 'DELIVRD', errorCode: null })), 9))();
    expect(finished).toBe(135);
    const states = db.prepare(`SELECT state, last_status, last_error_code, final_at, COUNT(*) AS n FROM message_parts WHERE state IN ('delivered', 'undelivered')
      GROUP BY 1, 2, 3, 4 ORDER BY 1`).all();
    expect(states).toEqual([
      { state: 'delivered', last_status: 'DELIVRD', last_error_code: null, final_at: 9, n: 135 },
      { state: 'undelivered', last_status: 'UNDELIV', last_error_code: '1', final_at: 8, n: 5 },
    ]);

    const recipientIds = db.prepare('SELECT id FROM recipients ORDER BY id').pluck().all() as number[];
    db.transaction(() => writes.updateRecipients(recipientIds.map((recipientId, i) => ({
      recipientId, status: i % 2 === 0 ? 'delivered' as const : 'undelivered' as const, lastStatus: i % 2 === 0 ? 'DELIVRD' : 'UNDELIV',
    })), 10))();
    expect(db.prepare('SELECT status, last_status, updated_at, COUNT(*) AS n FROM recipients GROUP BY 1, 2, 3 ORDER BY 1').all()).toEqual([
      { status: 'delivered', last_status: 'DELIVRD', updated_at: 10, n: 75 },
      { status: 'undelivered', last_status: 'UNDELIV', updated_at: 10, n: 75 },
    ]);
  });
});
