/**
 * CampaignStore.statusCounts: a large campaign is counted at most once per ttlMs (a dashboard polling
 * it hard must not walk 100,000 index entries each time); a small one is always counted fresh.
 * Real SQLite file; the clock is injected, so no test waits.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { CampaignStore, SUMMARY_CACHE_DEFAULTS } from '../../src/store/sqlite/campaign-store.js';

let dir: string;
let store: Store;
let nowMs: number;

function addCampaign(id: string, recipients: number): void {
  const db = store.db;
  const clientId = Number(db.prepare(`INSERT INTO clients (name, created_at) VALUES (?, 0)`).run(`c-${id}`).lastInsertRowid);
  db.prepare(`INSERT INTO campaigns (id, client_id, state, name, sender, text, created_at) VALUES (?, ?, 'ready', 'API Broadcast', 'Gate', 'hi', 0)`)
    .run(id, clientId);
  const insert = db.prepare(`INSERT INTO recipients (campaign_id, msisdn) VALUES (?, ?)`);
  db.transaction(() => {
    for (let i = 0; i < recipients; i++) insert.run(id, `4670${String(i).padStart(7, '0')}`);
  })();
}

function deliver(id: string, recipients: number): void {
  store.db.prepare(`UPDATE recipients SET status = 'delivered' WHERE id IN (SELECT id FROM recipients WHERE campaign_id = ? AND status = 'pending' LIMIT ?)`)
    .run(id, recipients);
}

const LARGE = '00000000-0000-4000-8000-000000000001';
const SMALL = '00000000-0000-4000-8000-000000000002';

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-summary-'));
  store = await openStore({ path: join(dir, 'gate.sqlite'), synchronous: 'NORMAL' });
  nowMs = 1_000;
  addCampaign(LARGE, 20);
  addCampaign(SMALL, 19);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('CampaignStore.statusCounts', () => {
  it('defaults: 250 ms for campaigns of 10,000 recipients or more', () => {
    expect(SUMMARY_CACHE_DEFAULTS).toEqual({ ttlMs: 250, minRecipients: 10_000 });
  });

  it('counts a large campaign again only once ttlMs has passed', () => {
    const campaigns = new CampaignStore(store.db, { ttlMs: 200, minRecipients: 20, now: () => nowMs });
    expect(campaigns.statusCounts(LARGE)).toEqual({ pending: 20, delivered: 0, undelivered: 0 });
    deliver(LARGE, 5);
    nowMs += 199;
    expect(campaigns.statusCounts(LARGE)).toEqual({ pending: 20, delivered: 0, undelivered: 0 });
    nowMs += 1;
    expect(campaigns.statusCounts(LARGE)).toEqual({ pending: 15, delivered: 5, undelivered: 0 });
  });

  it('counts a campaign below minRecipients fresh on every call', () => {
    const campaigns = new CampaignStore(store.db, { ttlMs: 200, minRecipients: 20, now: () => nowMs });
    expect(campaigns.statusCounts(SMALL)).toEqual({ pending: 19, delivered: 0, undelivered: 0 });
    deliver(SMALL, 4);
    expect(campaigns.statusCounts(SMALL)).toEqual({ pending: 15, delivered: 4, undelivered: 0 });
  });

  it('hands out copies: a caller changing its counts does not change the next answer', () => {
    const campaigns = new CampaignStore(store.db, { ttlMs: 200, minRecipients: 20, now: () => nowMs });
    const first = campaigns.statusCounts(LARGE);
    first.pending = 0;
    expect(campaigns.statusCounts(LARGE)).toEqual({ pending: 20, delivered: 0, undelivered: 0 });
  });

  it('by default counts a small campaign fresh (the API tests see every change at once)', () => {
    const campaigns = new CampaignStore(store.db);
    expect(campaigns.statusCounts(LARGE).pending).toBe(20);
    deliver(LARGE, 1);
    expect(campaigns.statusCounts(LARGE)).toEqual({ pending: 19, delivered: 1, undelivered: 0 });
  });
});
