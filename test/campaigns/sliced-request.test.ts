/**
 * A request of more than RECIPIENTS_PER_REQUEST_SLICE recipients is stored in slices and processed
 * slice by slice, with the spec's recipient rules unchanged across slices.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RECIPIENTS_PER_REQUEST_SLICE } from '../../src/campaigns/campaign-service.js';
import { startApiFixture, type ApiFixture } from '../support/api-fixture.js';

let fixture: ApiFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

function count(sql: string, ...params: unknown[]): number {
  return (fixture!.store.db.prepare(sql).get(...params) as { n: number }).n;
}

describe('a campaign request stored in slices', () => {
  it('processes every slice: duplicates across slices are skipped, the first ClientReference kept, slices deleted', async () => {
    fixture = await startApiFixture({ startProcessor: false });
    const { token } = await fixture.createAccount({ senders: [{ name: 'Acme', type: 0 }] });
    const total = RECIPIENTS_PER_REQUEST_SLICE * 2 + 1234;
    const recipientInfo = Array.from({ length: total }, (_, i) => ({ msisdn: `08${String(70_000_000 + i)}`, ClientReference: `r${i}` }));
    // The last recipient repeats the first in another form, two slices later.
    recipientInfo.push({ msisdn: '+3538' + String(70_000_000), ClientReference: 'late duplicate' });
    const response = await fixture.postCampaign(token, { text: 'Hi', from: 'Acme', recipientInfo });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    // 5,235 recipients of about 45 bytes each: 230 kB of JSON, stored as the parser's runs of at most 64 KiB.
    expect(count('SELECT COUNT(*) AS n FROM campaign_request_chunks WHERE campaign_id = ?', id)).toBe(4);
    expect(fixture.store.db.prepare('SELECT request_recipients FROM campaigns WHERE id = ?').get(id)).toEqual({ request_recipients: null });
    expect(await fixture.processor.processOnce()).toBe(1);
    const summary = await fixture.getSummary(token, id);
    expect(await summary.json()).toEqual({ totalSent: total, delivered: 0, undelivered: 0, pending: total });
    expect(fixture.store.db.prepare('SELECT client_reference FROM recipients WHERE campaign_id = ? AND msisdn = ?').get(id, '353870000000'))
      .toEqual({ client_reference: 'r0' });
    expect(count('SELECT COUNT(*) AS n FROM campaign_request_chunks')).toBe(0);
  });

  it('deletes slices that never became a campaign when the processor starts', async () => {
    fixture = await startApiFixture({ startProcessor: false });
    fixture.store.db.prepare("INSERT INTO campaign_request_chunks (campaign_id, seq, recipients_json) VALUES ('orphan', 0, '[]')").run();
    fixture.processor.start();
    expect(count('SELECT COUNT(*) AS n FROM campaign_request_chunks')).toBe(0);
  });

  it('stores nothing when the store refuses a slice: 503, no campaign, no slices', async () => {
    fixture = await startApiFixture({ startProcessor: false });
    const { token } = await fixture.createAccount();
    const db = fixture.store.db;
    // SQLITE_FULL is a genuine refusal: cap the file at its current size plus a little.
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 40}`);
    const recipientInfo = Array.from({ length: RECIPIENTS_PER_REQUEST_SLICE * 20 }, (_, i) => ({ msisdn: String(353_860_000_000 + i) }));
    const response = await fixture.postCampaign(token, { text: 'Hi', from: 'Acme', recipientInfo });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    db.pragma('max_page_count = 1073741823');
    expect(count('SELECT COUNT(*) AS n FROM campaigns')).toBe(0);
    expect(count('SELECT COUNT(*) AS n FROM campaign_request_chunks')).toBe(0);
  });
});
