/**
 * The status queries the operator view added, on SQLite and on a real PostgreSQL: finished
 * campaigns (a campaign with a recipient pending is not one), the undelivered recipients grouped by
 * what failed them (a receipt's status, or a submit's code for a part the network never took), and
 * client names. Both backends give the same answers, and the same outcome breakdown from them.
 */
import { expect, it } from 'vitest';
import { outcomeBreakdown } from '../../src/admin/campaign-outcomes.js';
import type { ClaimablePart } from '../../src/store/sqlite/dispatch-store.js';
import { describeEachBackend, type Stores } from '../store/conformance/backends.js';
import { T0_MS, dispatchAll, seedClient, seedReadyCampaign } from '../store/conformance/seed.js';

async function claim(stores: Stores, campaignId: string): Promise<ClaimablePart> {
  const [part] = (await stores.dispatch.claimableInCampaign('carrier', campaignId, T0_MS, 1)) as [ClaimablePart];
  expect(await stores.dispatch.markSubmitting(part.id, T0_MS + 1)).toBe(true);
  return part;
}

/** A part the network took, whose receipt said `status`. */
async function receipted(stores: Stores, campaignId: string, status: 'DELIVRD' | 'UNDELIV' | 'EXPIRED'): Promise<void> {
  const part = await claim(stores, campaignId);
  await stores.dispatch.markSubmitted(part.id, `m-${part.id}`, T0_MS + 2);
  const final = status === 'DELIVRD' ? 'delivered' : 'undelivered';
  await stores.dispatch.finishPart(part.id, final, status, null, T0_MS + 3);
  await stores.dispatch.updateRecipient(part.recipient_id, final, status, T0_MS + 3);
}

/** A part the network refused at submit with `code`. */
async function rejected(stores: Stores, campaignId: string, code: string): Promise<void> {
  const part = await claim(stores, campaignId);
  await stores.dispatch.failPart(part.id, 1, code, '11', T0_MS + 2);
  await stores.dispatch.updateRecipient(part.recipient_id, 'undelivered', code, T0_MS + 2);
}

describeEachBackend('the operator view\'s status queries', (open) => {
  it('lists a campaign as finished once no recipient is pending, with its undelivered recipients grouped', async () => {
    const { stores } = await open();
    const seeded = await seedReadyCampaign(stores, { recipients: 6 });
    await dispatchAll(stores, seeded, 'carrier');
    await receipted(stores, seeded.campaignId, 'DELIVRD');
    await receipted(stores, seeded.campaignId, 'UNDELIV');
    await receipted(stores, seeded.campaignId, 'UNDELIV');
    await rejected(stores, seeded.campaignId, 'ESME_RINVDSTADR');
    await receipted(stores, seeded.campaignId, 'EXPIRED');
    // One recipient still pending: in progress, not finished.
    expect(await stores.status.finishedCampaigns(10)).toEqual([]);
    expect((await stores.status.campaignsInProgress(10)).map((c) => c.id)).toEqual([seeded.campaignId]);

    await rejected(stores, seeded.campaignId, 'ESME_RINVDSTADR');
    expect(await stores.status.campaignsInProgress(10)).toEqual([]);
    expect(await stores.status.finishedCampaigns(10)).toEqual([{
      id: seeded.campaignId, name: 'spring', client: 'acme', state: 'ready', createdAtMs: T0_MS, total: 6, sent: 6, delivered: 1, undelivered: 5, pending: 0,
    }]);
    const groups = await stores.status.undeliveredGroups(seeded.campaignId);
    const byKey = (g: { lastStatus: string | null; rejected: boolean }): string => `${g.lastStatus}/${g.rejected}`;
    expect([...groups].sort((a, b) => byKey(a).localeCompare(byKey(b)))).toEqual([
      { lastStatus: 'ESME_RINVDSTADR', rejected: true, recipients: 2 },
      { lastStatus: 'EXPIRED', rejected: false, recipients: 1 },
      { lastStatus: 'UNDELIV', rejected: false, recipients: 2 },
    ]);
    expect(outcomeBreakdown({ delivered: 1, pending: 0 }, groups)).toEqual({
      delivered: 1,
      undelivered: { total: 3, byStatus: [{ name: 'UNDELIV', recipients: 2 }, { name: 'EXPIRED', recipients: 1 }] },
      rejected: { total: 2, byCode: [{ name: 'ESME_RINVDSTADR', recipients: 2 }] },
      pending: 0,
    });
    expect(await stores.status.undeliveredGroups('no-such-campaign')).toEqual([]);
  });

  it('names every client', async () => {
    const { stores } = await open();
    const a = await seedClient(stores, 'acme');
    const b = await seedClient(stores, 'bare <b>', null);
    expect(await stores.status.clientNames()).toEqual([{ id: a.clientId, name: 'acme' }, { id: b.clientId, name: 'bare <b>' }]);
  });
});
