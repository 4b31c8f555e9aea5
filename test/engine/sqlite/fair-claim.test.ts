/**
 * src/engine/fair-claim.ts on a real SQLite store: a claim splits its limit over the campaigns
 * with due parts and interleaves their messages; a small campaign's message is among the first
 * of the next claim however large the other campaign's backlog; a campaign alone gets the whole
 * claim; with more campaigns than a claim holds, successive claims rotate through them.
 */
import { describe, expect, it } from 'vitest';
import { FairClaimer } from '../../../src/engine/fair-claim.js';
import { claimSizesFor } from '../../../src/engine/transport-lane.js';
import { DispatchStore, type ClaimablePart } from '../../../src/store/sqlite/dispatch-store.js';
import { useTempSqliteStore } from '../../support/temp-sqlite-store.js';

const openTempStore = useTempSqliteStore('fair');

async function storeWith(campaigns: Record<string, { recipients: number; parts?: number }>): Promise<DispatchStore> {
  const store = await openTempStore({ synchronous: 'NORMAL' });
  const db = store.db;
  const dispatch = new DispatchStore(db);
  db.prepare(`INSERT INTO clients (id, name, active, created_at) VALUES (1, 'c', 1, 0)`).run();
  let n = 0;
  db.transaction(() => {
    for (const [id, { recipients, parts = 1 }] of Object.entries(campaigns)) {
      db.prepare(
        `INSERT INTO campaigns (id, client_id, state, name, sender, text, send_at, text_sent, encoding, parts_per_message, total_sent, skipped_count, created_at, ready_at)
         VALUES (?, 1, 'ready', 'n', 'Acme', 't', 0, 't', 'GSM7', ?, ?, 0, 0, 0)`,
      ).run(id, parts, recipients);
      for (let i = 0; i < recipients; i++) {
        const recipientId = Number(db.prepare(`INSERT INTO recipients (campaign_id, msisdn) VALUES (?, ?)`).run(id, `35387${String(n++).padStart(7, '0')}`).lastInsertRowid);
        for (let partNumber = 1; partNumber <= parts; partNumber++) {
          // Earlier campaigns' parts are due first, as a large campaign materialised before a small one.
          dispatch.insertPart({ recipientId, campaignId: id, partNumber, partsTotal: parts, concatReference: 0, transport: 'carrier', state: 'queued', lastStatus: null, nextAttemptAt: n, finalAt: null }, 0);
        }
      }
    }
  })();
  return dispatch;
}

const campaignsOf = (messages: ClaimablePart[][]): string[] => messages.map((m) => m[0]?.campaign_id ?? '?');

describe('FairClaimer', () => {
  it('puts a small campaign\'s message second in the claim, not behind the large backlog', async () => {
    const dispatch = await storeWith({ large: { recipients: 2_000 }, small: { recipients: 1 } });
    const claimer = new FairClaimer(dispatch, 'carrier');
    const first = dispatch.db.transaction(() => claimer.claim(1e12, 100))();
    expect(first).toHaveLength(100);
    expect(campaignsOf(first).indexOf('small')).toBeLessThanOrEqual(1);
    expect(campaignsOf(first).filter((c) => c === 'large')).toHaveLength(99);
    // Alone, the large campaign gets whole claims.
    const second = dispatch.db.transaction(() => claimer.claim(1e12, 100))();
    expect(campaignsOf(second)).toEqual(Array.from({ length: 100 }, () => 'large'));
    // Claimed parts are 'submitting'; nothing is claimed twice.
    const ids = [...first, ...second].flat().map((p) => p.id);
    expect(new Set(ids).size).toBe(200);
    expect(dispatch.db.prepare(`SELECT COUNT(*) AS n FROM message_parts WHERE state = 'submitting'`).get()).toEqual({ n: 200 });
  });

  it('interleaves campaigns message by message and keeps a recipient\'s parts together', async () => {
    const dispatch = await storeWith({ a: { recipients: 10, parts: 2 }, b: { recipients: 10, parts: 2 } });
    const claimer = new FairClaimer(dispatch, 'carrier');
    const messages = dispatch.db.transaction(() => claimer.claim(1e12, 8))();
    expect(campaignsOf(messages)).toEqual(['a', 'b', 'a', 'b']);
    for (const message of messages) expect(message.map((p) => p.part_number)).toEqual([1, 2]);
  });

  it('gives what a small campaign leaves unused to the others', async () => {
    const dispatch = await storeWith({ a: { recipients: 1 }, b: { recipients: 50 }, c: { recipients: 50 } });
    const claimer = new FairClaimer(dispatch, 'carrier');
    const messages = dispatch.db.transaction(() => claimer.claim(1e12, 30))();
    const counts = campaignsOf(messages).reduce((m, c) => m.set(c, (m.get(c) ?? 0) + 1), new Map<string, number>());
    expect(Object.fromEntries(counts)).toEqual({ a: 1, b: 15, c: 14 });
  });

  it('rotates through more campaigns than one claim holds', async () => {
    const dispatch = await storeWith({ a: { recipients: 5 }, b: { recipients: 5 }, c: { recipients: 5 } });
    const claimer = new FairClaimer(dispatch, 'carrier');
    const served = [1, 2, 3].map(() => campaignsOf(dispatch.db.transaction(() => claimer.claim(1e12, 2))()));
    expect(served).toEqual([['a', 'b'], ['c', 'a'], ['b', 'c']]);
  });
});

describe('claimSizesFor: how much a lane claims ahead', () => {
  it('keeps about half a second of sending queued on a paced transport', () => {
    // 100/s (the SMPP default): 50 per claim, claim again under 50 queued: at most ~1 s ahead.
    expect(claimSizesFor(100, 10, 500)).toEqual({ claimMessages: 50, lowWaterMessages: 50 });
    // Never less than the window, so the window can always be filled.
    expect(claimSizesFor(2, 10, 500)).toEqual({ claimMessages: 10, lowWaterMessages: 10 });
  });

  it('claims as before on a fast or unpaced transport (500 per claim, again under max(window, 64))', () => {
    expect(claimSizesFor(100_000, 100, 500)).toEqual({ claimMessages: 500, lowWaterMessages: 100 });
    expect(claimSizesFor(1_000, 10, 500)).toEqual({ claimMessages: 500, lowWaterMessages: 64 });
    expect(claimSizesFor(Number.POSITIVE_INFINITY, 10, 500)).toEqual({ claimMessages: 500, lowWaterMessages: 64 });
  });
});
