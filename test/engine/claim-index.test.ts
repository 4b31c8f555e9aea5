/**
 * migrations/1763900000000-message-parts-claim-index.ts: a lane's claim starts at its transport
 * in the index, so parts queued for another transport (say one that is down, with a backlog) are
 * never walked. Checked on the query plan and on the rows a claim returns.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { DispatchStore } from '../../src/store/dispatch-store.js';

let store: Store | undefined;
let dir: string | undefined;
afterEach(async () => {
  await store?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  store = undefined;
  dir = undefined;
});

async function seeded(): Promise<{ db: Store['db']; dispatch: DispatchStore }> {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-claim-'));
  store = await openStore({ path: join(dir, 'smsgate.sqlite'), synchronous: 'NORMAL' });
  const db = store.db;
  db.prepare(`INSERT INTO clients (id, name, active, created_at) VALUES (1, 'c', 1, 0)`).run();
  db.prepare(
    `INSERT INTO campaigns (id, client_id, state, name, sender, text, send_at, text_sent, encoding, parts_per_message, total_sent, skipped_count, created_at, ready_at)
     VALUES ('k', 1, 'ready', 'n', 'Acme', 't', 0, 't', 'GSM7', 1, 0, 0, 0, 0)`,
  ).run();
  const dispatch = new DispatchStore(db);
  db.transaction(() => {
    for (let i = 0; i < 1_000; i++) {
      const recipientId = Number(db.prepare(`INSERT INTO recipients (campaign_id, msisdn) VALUES ('k', ?)`).run(`3538700${String(i).padStart(5, '0')}`).lastInsertRowid);
      // 999 parts held for a transport that is down, ahead of the one part for 'up' in due order.
      const transport = i === 999 ? 'up' : 'down';
      dispatch.insertPart({ recipientId, campaignId: 'k', partNumber: 1, partsTotal: 1, concatReference: 0, transport, state: 'queued', lastStatus: null, nextAttemptAt: i, finalAt: null }, 0);
    }
  })();
  return { db, dispatch };
}

describe('claiming parts per transport', () => {
  it('uses the message_parts_claim index, starting at the transport', async () => {
    const { db } = await seeded();
    const plan = db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT p.id FROM message_parts p JOIN recipients r ON r.id = p.recipient_id
         WHERE p.state = 'queued' AND p.transport = ? AND p.next_attempt_at <= ? ORDER BY p.next_attempt_at, p.id LIMIT ?`,
      )
      .all('up', 10_000, 10) as { detail: string }[];
    const details = plan.map((row) => row.detail).join('\n');
    expect(details).toMatch(/SEARCH p USING INDEX message_parts_claim \(transport=\? AND state=\? AND next_attempt_at<\?\)/);
    expect(details).not.toMatch(/TEMP B-TREE/);
  });

  it('returns only the transport\'s own due parts, in due order', async () => {
    const { dispatch } = await seeded();
    expect(dispatch.claimable('up', 10_000, 10).map((p) => p.msisdn)).toEqual(['353870000999']);
    expect(dispatch.claimable('down', 2, 10).map((p) => p.msisdn)).toEqual(['353870000000', '353870000001', '353870000002']);
  });
});
