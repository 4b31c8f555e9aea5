/**
 * The SQLite statements of the steps before a submit (claim-queries.ts, materialise-queries.ts) run
 * on index seeks: a claim's candidates are found one index seek per campaign from the transport in
 * message_parts_fair_claim and counted from the index alone, never walking parts of another
 * transport or campaign; a pass counts and takes waiting recipients through recipients_dispatch.
 * Checked on the query plans of the very text the stores prepare, and on the rows they return.
 */
import { describe, expect, it } from 'vitest';
import { CLAIM_CANDIDATES_SQL, SqliteClaimStore } from '../../src/store/sqlite/claim-queries.js';
import type { Store } from '../../src/store/sqlite/database.js';
import { DispatchStore } from '../../src/store/sqlite/dispatch-store.js';
import { MATERIALISE_SQL } from '../../src/store/sqlite/materialise-queries.js';
import { queryPlan } from '../support/query-plan.js';
import { useTempSqliteStore } from '../support/temp-sqlite-store.js';

const openTempStore = useTempSqliteStore('step-plans');

async function seeded(): Promise<Store['db']> {
  const store = await openTempStore({ synchronous: 'NORMAL' });
  const db = store.db;
  const dispatch = new DispatchStore(db);
  db.prepare(`INSERT INTO clients (id, name, active, created_at) VALUES (1, 'c', 1, 0)`).run();
  db.transaction(() => {
    for (const id of ['a', 'b', 'c', 'd']) {
      db.prepare(
        `INSERT INTO campaigns (id, client_id, state, name, sender, text, send_at, text_sent, encoding, parts_per_message, total_sent, skipped_count, created_at, ready_at)
         VALUES (?, 1, 'ready', 'n', 'Acme', 't', 0, 't', 'GSM7', 1, 0, 0, 0, 0)`,
      ).run(id);
      // 'b' has 300 parts for a transport that is down; every campaign but 'd' 3 for 'up', one of them not due before 5,000.
      const parts = id === 'b' ? 303 : id === 'd' ? 0 : 3;
      for (let i = 0; i < parts; i++) {
        const recipientId = Number(db.prepare(`INSERT INTO recipients (campaign_id, msisdn) VALUES (?, ?)`).run(id, `35387${id}${i}`).lastInsertRowid);
        const transport = i < 3 ? 'up' : 'down';
        dispatch.insertPart({ recipientId, campaignId: id, partNumber: 1, partsTotal: 1, concatReference: 0, transport, state: 'queued', lastStatus: null,
          nextAttemptAt: i === 2 ? 5_000 : i, finalAt: null }, 0);
      }
    }
  })();
  return db;
}

describe('query plans of the claim and materialise steps on SQLite', () => {
  it('reads a claim\'s candidates by index seeks and index-only counts, never scanning parts', async () => {
    const db = await seeded();
    const plan = queryPlan(db, CLAIM_CANDIDATES_SQL, { transport: 'up', cursor: 'b', now: 1_000, limit: 10 });
    const partAccesses = plan.filter((line) => /message_parts| p /.test(line));
    expect(partAccesses.length).toBeGreaterThanOrEqual(5);
    for (const line of partAccesses) expect(line).toMatch(/^SEARCH (message_parts|p) USING COVERING INDEX message_parts_fair_claim \(transport=\? AND state=\?/);
  });

  it('lists the campaigns after the cursor, then from the first up to it, with their due parts counted up to the limit', async () => {
    const db = await seeded();
    const claims = new SqliteClaimStore(db);
    const listed = (transport: string, cursor: string, nowMs: number, limit: number): { campaignId: string; due: number }[] =>
      claims.readClaimCandidates(transport, cursor, nowMs, limit).map(({ campaignId, due }) => ({ campaignId, due }));
    expect(listed('up', 'b', 1_000, 10)).toEqual([
      { campaignId: 'c', due: 2 }, { campaignId: 'a', due: 2 }, { campaignId: 'b', due: 2 },
    ]);
    expect(listed('up', '', 1_000, 2)).toEqual([{ campaignId: 'a', due: 2 }, { campaignId: 'b', due: 2 }]);
    expect(listed('up', 'a', 10_000, 1)).toEqual([{ campaignId: 'b', due: 1 }]);
    expect(listed('down', '', 10_000, 50)).toEqual([{ campaignId: 'b', due: 50 }]);
    expect(listed('gone', 'x', 10_000, 10)).toEqual([]);
  });

  it('lists each campaign\'s client with its send rate by primary key, and reads no client while no client has a rate', async () => {
    const db = await seeded();
    const claims = new SqliteClaimStore(db);
    expect(claims.readClaimCandidates('up', '', 1_000, 2)).toEqual([
      { campaignId: 'a', due: 2, clientId: null, partsPerSecond: null, nextPartAtUs: null },
      { campaignId: 'b', due: 2, clientId: null, partsPerSecond: null, nextPartAtUs: null },
    ]);
    db.prepare(`INSERT INTO clients (id, name, active, created_at) VALUES (2, 'd', 1, 0)`).run();
    db.prepare(`UPDATE campaigns SET client_id = 2 WHERE id = 'b'`).run();
    db.prepare('INSERT INTO client_send_rates (client_id, parts_per_second, next_part_at_us, updated_at) VALUES (1, 50, 123, 0)').run();
    expect(claims.readClaimCandidates('up', '', 1_000, 2).map((c) => [c.campaignId, c.clientId, c.partsPerSecond, c.nextPartAtUs])).toEqual([
      ['a', 1, 50, 123], ['b', 2, null, null],
    ]);
    const plan = queryPlan(db, CLAIM_CANDIDATES_SQL, { transport: 'up', cursor: 'b', now: 1_000, limit: 10 });
    // The campaign and the rate by key; the constant check that any rate exists, once.
    expect(plan.filter((line) => /\b(c|r|client_send_rates)\b/.test(line) && !/message_parts/.test(line))).toEqual([
      expect.stringMatching(/^SEARCH c USING INDEX sqlite_autoindex_campaigns_1 \(id=\?\)( LEFT-JOIN)?$/),
      expect.stringMatching(/^SCAN client_send_rates$/),
      expect.stringMatching(/^SEARCH r USING INTEGER PRIMARY KEY \(rowid=\?\)( LEFT-JOIN)?$/),
    ]);
    // Not correlated: SQLite evaluates it once per statement, not once per campaign.
    expect(plan[plan.indexOf('SCAN client_send_rates') - 1]).toMatch(/^SCALAR SUBQUERY \d+$/);
  });

  it('counts and takes waiting recipients through the recipients_dispatch index', async () => {
    const db = await seeded();
    for (const line of queryPlan(db, MATERIALISE_SQL.readyCampaigns, { now: 1, limit: 16, cap: 500 }).filter((l) => /\br\b|recipients/.test(l))) {
      expect(line).toMatch(/^SEARCH r USING COVERING INDEX recipients_dispatch \(campaign_id=\? AND dispatch_state=\?\)$/);
    }
    const take = queryPlan(db, MATERIALISE_SQL.waitingRecipients, 'a', 10);
    expect(take).toContain('SEARCH r USING INDEX recipients_dispatch (campaign_id=? AND dispatch_state=?)');
    expect(take.join('\n')).not.toMatch(/TEMP B-TREE|SCAN r/);
  });
});
