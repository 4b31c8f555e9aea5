/**
 * What lets one POST of a million recipients through without a stall, checked on real parts (a
 * SQLite file, HTTP on loopback), none of it by timing:
 * - the request's slices and a campaign's recipient chunks commit without an fsync of their own,
 *   and the connection is back at synchronous=FULL for the campaign row and the ready mark, whose
 *   commits make them durable (src/store/sqlite/deferred-sync.ts);
 * - a run of recipients spelt as the spec spells them is stored as the very text it was parsed
 *   from, a run with another spelling is serialised, and either way processing reads every
 *   recipient back once, in order, with its ClientReference;
 * - the body's scan pauses inside an element longer than a slice and resumes where it stopped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseJsonLazily, SCAN_SLICE_BYTES, type LazyJsonArray } from '../../src/api/sliced-json.js';
import { readStoredRecipients } from '../../src/campaigns/campaign-request.js';
import { CampaignRequestStore } from '../../src/store/sqlite/campaign-request-store.js';
import { startApiFixture, type ApiFixture } from '../support/api-fixture.js';
import { recordSyncPragmas } from '../support/sync-pragmas.js';
import { useTempSqliteStore } from '../support/temp-sqlite-store.js';

let fixture: ApiFixture | undefined;
const openTempStore = useTempSqliteStore('million');
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe('a million-recipient request', () => {
  it('commits its slices without their own fsync and leaves the connection at synchronous=FULL', async () => {
    const store = await openTempStore({ synchronous: 'FULL' });
    const slices = new CampaignRequestStore(store.db);
    const seen = recordSyncPragmas(store.db);
    slices.insertSlices('c1', 0, ['[{"msisdn":"1"}]', '[{"msisdn":"2"}]']);
    expect(seen).toEqual(['synchronous', 'synchronous = 1', 'synchronous = 2']);
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2);
    expect(slices.sliceCount('c1')).toBe(2);
    seen.length = 0;
    expect(slices.deleteSlices('c1', 10)).toBe(2);
    expect(seen).toEqual(['synchronous', 'synchronous = 1', 'synchronous = 2']);
  });

  it('leaves a connection configured synchronous=NORMAL as it is', async () => {
    const store = await openTempStore({ synchronous: 'NORMAL' });
    const seen = recordSyncPragmas(store.db);
    new CampaignRequestStore(store.db).insertSlices('c1', 0, ['[]']);
    expect(seen).toEqual(['synchronous']);
    expect(store.db.pragma('synchronous', { simple: true })).toBe(1);
  });

  it('stores a run spelt as the spec spells it as sent, serialises another spelling, and processes every recipient once in order', async () => {
    fixture = await startApiFixture({ startProcessor: false });
    const { token } = await fixture.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
    const total = 6_000;
    const recipientInfo: Array<Record<string, string>> = Array.from({ length: total }, (_, i) => ({ msisdn: `4477${String(i).padStart(8, '0')}`, ClientReference: `r${i}` }));
    // Past the first run (64 KiB is about 1,400 of these): another spelling of both names.
    recipientInfo[3_000] = { MSISDN: '447700003000', clientreference: 'r3000' };
    const seen = recordSyncPragmas(fixture.store.db);
    const response = await fixture.postCampaign(token, { text: 'Hi', from: 'Acme', recipientInfo });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    // Every slice committed at NORMAL, the campaign row at FULL: the connection ends at FULL.
    expect(seen.filter((s) => s === 'synchronous = 1').length).toBeGreaterThanOrEqual(4);
    expect(fixture.store.db.pragma('synchronous', { simple: true })).toBe(2);

    const stored = (fixture.store.db.prepare('SELECT recipients_json FROM campaign_request_chunks WHERE campaign_id = ? ORDER BY seq').all(id) as Array<{ recipients_json: string }>)
      .map((row) => row.recipients_json);
    // The first run is the request's own text; the run holding the other spelling is serialised.
    expect(stored[0]).toBe(`[${JSON.stringify(recipientInfo.slice(0, readStoredRecipients(stored[0]!).length)).slice(1, -1)}]`);
    expect(stored.flatMap(readStoredRecipients)).toEqual(recipientInfo.map((r, i) => ({ msisdn: `4477${String(i).padStart(8, '0')}`, clientReference: r['ClientReference'] ?? r['clientreference'] })));

    expect(await fixture.processor.processOnce()).toBe(1);
    const rows = fixture.store.db.prepare('SELECT msisdn, client_reference FROM recipients WHERE campaign_id = ? ORDER BY id').all(id) as Array<{ msisdn: string; client_reference: string }>;
    expect(rows).toHaveLength(total);
    expect(rows[3_000]).toEqual({ msisdn: '447700003000', client_reference: 'r3000' });
    expect(rows.every((row, i) => row.client_reference === `r${i}`)).toBe(true);
    expect(fixture.store.db.pragma('synchronous', { simple: true })).toBe(2);
  });

  it('pauses the scan inside an element longer than a slice and resumes where it stopped', async () => {
    const long = { msisdn: '1', padding: Array.from({ length: 60_000 }, (_, i) => [i, { a: `x${i}` }]) };
    const text = JSON.stringify({ recipientInfo: [{ msisdn: '0' }, long, { msisdn: '2' }] });
    expect(text.length).toBeGreaterThan(SCAN_SLICE_BYTES * 4);
    let yields = 0;
    const parsed = await parseJsonLazily(Buffer.from(text), (key) => key === 'recipientInfo', async () => {
      yields++;
    }) as { recipientInfo: LazyJsonArray };
    expect(yields).toBeGreaterThanOrEqual(4);
    const values: unknown[] = [];
    for await (const run of parsed.recipientInfo.runs()) values.push(...run.values);
    expect(values).toEqual(JSON.parse(text).recipientInfo);
  });
});
