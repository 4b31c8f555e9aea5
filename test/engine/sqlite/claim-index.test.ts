/**
 * migrations/1764100000001-message-parts-fair-claim-index.ts: the two statements a lane's fair
 * claim runs (CLAIM_SQL, the very text DispatchStore prepares) start at the transport in the index:
 * parts queued for another transport (say one that is down, with a backlog) or for other campaigns
 * are never walked, and the campaigns are found by one index seek each. Checked on the query plans
 * and on the rows the statements return.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/sqlite/database.js';
import { CLAIM_FIRST_OF_CAMPAIGNS_SQL } from '../../../src/store/sqlite/claim-queries.js';
import { BATCH_SQL, CLAIM_SQL, DispatchStore } from '../../../src/store/sqlite/dispatch-store.js';
import { queryPlan } from '../../support/query-plan.js';
import { useTempSqliteStore } from '../../support/temp-sqlite-store.js';

const openTempStore = useTempSqliteStore('claim');

async function seeded(): Promise<{ db: Store['db']; dispatch: DispatchStore }> {
  const store = await openTempStore({ synchronous: 'NORMAL' });
  const db = store.db;
  db.prepare(`INSERT INTO clients (id, name, active, created_at) VALUES (1, 'c', 1, 0)`).run();
  for (const id of ['k', 'm']) {
    db.prepare(
      `INSERT INTO campaigns (id, client_id, state, name, sender, text, send_at, text_sent, encoding, parts_per_message, total_sent, skipped_count, created_at, ready_at)
       VALUES (?, 1, 'ready', 'n', 'Acme', 't', 0, 't', 'GSM7', 1, 0, 0, 0, 0)`,
    ).run(id);
  }
  const dispatch = new DispatchStore(db);
  const part = (campaignId: string, msisdn: string, transport: string, nextAttemptAt: number): void => {
    const recipientId = Number(db.prepare(`INSERT INTO recipients (campaign_id, msisdn) VALUES (?, ?)`).run(campaignId, msisdn).lastInsertRowid);
    dispatch.insertPart({ recipientId, campaignId, partNumber: 1, partsTotal: 1, concatReference: 0, transport, state: 'queued', lastStatus: null, nextAttemptAt, finalAt: null }, 0);
  };
  db.transaction(() => {
    // 999 parts of campaign k held for a transport that is down, ahead of k's one part for 'up' in due order.
    for (let i = 0; i < 1_000; i++) part('k', `3538700${String(i).padStart(5, '0')}`, i === 999 ? 'up' : 'down', i);
    // Campaign m: three parts for 'up', one of them not due before 5,000.
    part('m', '353871000001', 'up', 10);
    part('m', '353871000002', 'up', 5_000);
    part('m', '353871000003', 'up', 20);
  })();
  return { db, dispatch };
}

function planOf(db: Store['db'], sql: string, ...params: unknown[]): string {
  return queryPlan(db, sql, ...params).join('\n');
}

describe('claiming parts per transport, round robin over campaigns', () => {
  it('finds the campaigns with queued parts by index seeks from the transport, never scanning parts', async () => {
    const { db } = await seeded();
    const plan = planOf(db, CLAIM_SQL.queuedCampaigns, { transport: 'up', after: '', limit: 10 });
    const partAccesses = plan.split('\n').filter((line) => /message_parts/.test(line));
    expect(partAccesses).toHaveLength(2);
    for (const line of partAccesses) {
      expect(line).toMatch(/^SEARCH message_parts USING COVERING INDEX message_parts_fair_claim \(transport=\? AND state=\? AND campaign_id>\?\)$/);
    }
    expect(plan).not.toMatch(/TEMP B-TREE/);
  });

  it('reads one campaign\'s due parts through the index in claim order, with no sort', async () => {
    const { db } = await seeded();
    const plan = planOf(db, CLAIM_SQL.claimableInCampaign, 'up', 'm', 10_000, 10);
    expect(plan).toMatch(/SEARCH p USING INDEX message_parts_fair_claim \(transport=\? AND state=\? AND campaign_id=\? AND next_attempt_at<\?\)/);
    expect(plan).not.toMatch(/SCAN p/);
    expect(plan).not.toMatch(/TEMP B-TREE/);
  });

  it('claims the first due part of many one-part shares in one statement, by one index seek a campaign, the part the per-campaign read takes first', async () => {
    const { db, dispatch } = await seeded();
    const plan = planOf(db, CLAIM_FIRST_OF_CAMPAIGNS_SQL, { campaigns: '["k","m"]', transport: 'up', now: 10_000 });
    expect(plan).toMatch(/SEARCH q USING (COVERING )?INDEX message_parts_fair_claim \(transport=\? AND state=\? AND campaign_id=\? AND next_attempt_at<\?\)/);
    expect(plan).not.toMatch(/SCAN (p|q|r)\b/);
    expect(plan).not.toMatch(/TEMP B-TREE/);
    const firstOf = db.prepare(CLAIM_FIRST_OF_CAMPAIGNS_SQL);
    for (const [transport, now] of [['up', 10_000], ['up', 1_000], ['down', 2], ['gone', 10_000]] as const) {
      const expected = ['k', 'm'].flatMap((c) => dispatch.claimableInCampaign(transport, c, now, 1));
      expect(firstOf.all({ campaigns: '["k","m"]', transport, now })).toEqual(expected);
      expect(expected.length).toBe(transport === 'gone' ? 0 : transport === 'down' ? 1 : 2);
    }
  });

  it('marks a claim and a batch of recipients with one rowid lookup per id, never walking the state indexes', async () => {
    const { db, dispatch } = await seeded();
    for (const sql of [BATCH_SQL.markManySubmitting, BATCH_SQL.markRecipientsDispatched]) {
      const plan = planOf(db, sql, 0, '[1,2]');
      expect(plan).toMatch(/^SEARCH (message_parts|recipients) USING INTEGER PRIMARY KEY \(rowid=\?\)$/m);
      expect(plan).not.toMatch(/message_parts_due|recipients_dispatch|SCAN (message_parts|recipients)/);
    }
    const [first, second] = dispatch.claimableInCampaign('up', 'm', 10_000, 10).map((p) => p.id);
    expect([...dispatch.markManySubmitting([first!, second!], 1)].sort()).toEqual([first, second].sort());
    // Already 'submitting': not marked again.
    expect(dispatch.markManySubmitting([first!], 2).size).toBe(0);
  });

  it('returns only the transport\'s own campaigns and due parts, in due order', async () => {
    const { dispatch } = await seeded();
    expect(dispatch.queuedCampaigns('up', '', 10)).toEqual(['k', 'm']);
    expect(dispatch.queuedCampaigns('up', 'k', 10)).toEqual(['m']);
    expect(dispatch.queuedCampaigns('up', '', 1)).toEqual(['k']);
    expect(dispatch.queuedCampaigns('down', '', 10)).toEqual(['k']);
    expect(dispatch.queuedCampaigns('gone', '', 10)).toEqual([]);
    expect(dispatch.claimableInCampaign('up', 'k', 10_000, 10).map((p) => p.msisdn)).toEqual(['353870000999']);
    expect(dispatch.claimableInCampaign('up', 'm', 1_000, 10).map((p) => p.msisdn)).toEqual(['353871000001', '353871000003']);
    expect(dispatch.claimableInCampaign('down', 'k', 2, 10).map((p) => p.msisdn)).toEqual(['353870000000', '353870000001', '353870000002']);
  });
});
