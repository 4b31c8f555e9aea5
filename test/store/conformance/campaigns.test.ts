/**
 * Store conformance: campaigns on SQLite and PostgreSQL: queued -> processing
 * -> ready or failed, the guards of each step, large-request slices, and the summary counts.
 */
import { expect, it } from 'vitest';
import type { NewCampaign } from '../../../src/store/sqlite/campaign-store.js';
import { describeEachBackend } from './backends.js';
import { T0_MS, seedClient } from './seed.js';

function campaign(id: string, clientId: number, userId: number, createdAtMs = T0_MS): NewCampaign {
  return { id, clientId, userId, state: 'queued', name: 'spring', sender: 'ACME', text: 'hi', sendAtLocal: '2025-12-01T09:00', createAsDraft: false,
    shouldSaveList: true, requestRecipientsJson: '[{"msisdn":"353870000001"}]', createdAtMs };
}

describeEachBackend('campaigns', (open) => {
  it('go queued -> processing -> ready; recipients are written only while processing', async () => {
    const { stores } = await open();
    const { clientId, userId } = await seedClient(stores);
    await stores.campaigns.insertCampaign(campaign('c-2', clientId, userId, T0_MS + 1));
    await stores.campaigns.insertCampaign(campaign('c-1', clientId, userId));
    expect(await stores.campaigns.unprocessedCampaignIds(10)).toEqual(['c-1', 'c-2']);
    expect(await stores.campaigns.appendRecipients('c-1', [{ msisdn: '353870000001', clientReference: 'r1' }], T0_MS)).toBe(false);
    expect(await stores.campaigns.claimForProcessing('c-1')).toEqual({ id: 'c-1', client_id: clientId, state: 'processing', sender: 'ACME', text: 'hi',
      send_at_local: '2025-12-01T09:00', request_recipients: '[{"msisdn":"353870000001"}]', created_at: T0_MS, credits_reserved: null });
    expect(await stores.campaigns.appendRecipients('c-1', [{ msisdn: '353870000001', clientReference: 'r1' }, { msisdn: '353870000002', clientReference: null }], T0_MS)).toBe(true);
    const ready = { campaignId: 'c-1', totalSent: 2, textSent: 'hi', encoding: 'GSM-7', partsPerMessage: 1, sendAtMs: T0_MS + 60_000, skippedCount: 1, readyAtMs: T0_MS + 5 };
    expect(await stores.campaigns.markReady(ready)).toBe(true);
    expect(await stores.campaigns.markReady(ready)).toBe(false);
    expect(await stores.campaigns.claimForProcessing('c-1')).toBeUndefined();
    expect(await stores.campaigns.findCampaign('c-1')).toMatchObject({ state: 'ready', request_recipients: null, total_sent: 2, skipped_count: 1,
      send_at: T0_MS + 60_000, ready_at: T0_MS + 5, create_as_draft: 0, should_save_list: 1 });
    expect(await stores.campaigns.statusCounts('c-1')).toEqual({ pending: 2, delivered: 0, undelivered: 0 });
    expect(await stores.campaigns.unprocessedCampaignIds(10)).toEqual(['c-2']);
    // Not due before its send time.
    expect(await stores.dispatch.dueCampaigns(T0_MS + 59_999, 10)).toEqual([]);
    expect((await stores.dispatch.dueCampaigns(T0_MS + 60_000, 10)).map((c) => c.id)).toEqual(['c-1']);
  });

  it('fails a campaign and drops what an attempt wrote; a ready campaign cannot fail', async () => {
    const { stores } = await open();
    const { clientId, userId } = await seedClient(stores);
    await stores.campaigns.insertCampaign(campaign('c-1', clientId, userId));
    await stores.campaigns.claimForProcessing('c-1');
    await stores.campaigns.appendRecipients('c-1', Array.from({ length: 250 }, (_, i) => ({ msisdn: `3538700${String(i).padStart(5, '0')}`, clientReference: null })), T0_MS);
    expect(await stores.campaigns.deletePartialRecipients('c-1', 100)).toBe(100);
    expect((await stores.campaigns.statusCounts('c-1')).pending).toBe(150);
    await stores.campaigns.markFailed('c-1', 'bad list');
    expect(await stores.campaigns.findCampaign('c-1')).toMatchObject({ state: 'failed', failure_reason: 'bad list' });
    expect(await stores.campaigns.statusCounts('c-1')).toEqual({ pending: 0, delivered: 0, undelivered: 0 });
    expect(await stores.campaigns.deletePartialRecipients('c-1', 100)).toBeUndefined();
    expect(await stores.campaigns.claimForProcessing('c-1')).toBeUndefined();
  });

  it('refuses a second recipient with the same number in a campaign, writing none of the batch', async () => {
    const { stores } = await open();
    const { clientId, userId } = await seedClient(stores);
    await stores.campaigns.insertCampaign(campaign('c-1', clientId, userId));
    await stores.campaigns.claimForProcessing('c-1');
    await expect(stores.campaigns.appendRecipients('c-1', [{ msisdn: '1', clientReference: null }, { msisdn: '1', clientReference: null }], T0_MS)).rejects.toThrow();
    expect((await stores.campaigns.statusCounts('c-1')).pending).toBe(0);
  });

  it('keeps large-request slices in order and deletes them when processed or orphaned', async () => {
    const { stores } = await open();
    const { clientId, userId } = await seedClient(stores);
    await stores.campaignRequests.insertSlices('c-1', 0, ['[1]', '[2]']);
    await stores.campaignRequests.insertSlices('c-1', 2, ['[3]']);
    await stores.campaignRequests.insertSlices('orphan', 0, ['[9]']);
    expect(await stores.campaignRequests.sliceCount('c-1')).toBe(3);
    expect(await stores.campaignRequests.slice('c-1', 2)).toBe('[3]');
    expect(await stores.campaignRequests.slice('c-1', 3)).toBeUndefined();
    await stores.campaigns.insertCampaign({ ...campaign('c-1', clientId, userId), requestRecipientsJson: null });
    expect(await stores.campaignRequests.deleteOrphans()).toBe(1);
    expect(await stores.campaignRequests.deleteProcessed()).toBe(0);
    expect(await stores.campaignRequests.deleteSlices('c-1', 2)).toBe(2);
    await stores.campaigns.markFailed('c-1', 'x');
    expect(await stores.campaignRequests.deleteProcessed()).toBe(1);
    expect(await stores.campaignRequests.sliceCount('c-1')).toBe(0);
  });
});
