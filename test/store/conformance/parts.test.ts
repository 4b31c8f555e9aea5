/**
 * Store conformance: message parts on SQLite and PostgreSQL: state transitions
 * and their guards, claim exclusivity under concurrency, the receipt that arrives before the
 * submit_sm_resp's message id is written, and crash recovery.
 */
import { expect, it } from 'vitest';
import type { ClaimablePart } from '../../../src/store/sqlite/dispatch-store.js';
import { describeEachBackend, type Stores } from './backends.js';
import { T0_MS, dispatchAll, seedReadyCampaign } from './seed.js';

async function partOf(stores: Stores, recipientId: number) {
  return (await stores.dispatch.partsOfRecipient(recipientId))[0];
}

describeEachBackend('message parts', (open) => {
  it('go queued -> submitting -> submitted -> delivered, each step guarded, a final state never overwritten', async () => {
    const { stores } = await open();
    const seeded = await seedReadyCampaign(stores, { recipients: 1 });
    expect((await stores.dispatch.dueCampaigns(T0_MS, 10)).map((c) => c.id)).toEqual([seeded.campaignId]);
    await dispatchAll(stores, seeded, 'carrier');
    expect(await stores.dispatch.dueCampaigns(T0_MS, 10)).toEqual([]);
    const [claimable] = await stores.dispatch.claimableInCampaign('carrier', seeded.campaignId, T0_MS, 10);
    const partId = (claimable as ClaimablePart).id;
    expect(claimable).toEqual({ id: partId, recipient_id: seeded.recipientIds[0], campaign_id: seeded.campaignId, part_number: 1, parts_total: 1,
      concat_reference: 7, attempts: 0, msisdn: '353870000000' });
    expect(await stores.dispatch.markSubmitted(partId, 'm-1', T0_MS)).toBe(false);
    expect(await stores.dispatch.markSubmitting(partId, T0_MS + 1)).toBe(true);
    expect(await stores.dispatch.markSubmitting(partId, T0_MS + 1)).toBe(false);
    expect(await stores.dispatch.markSubmitted(partId, 'm-1', T0_MS + 2)).toBe(true);
    expect(await stores.dispatch.requeue(partId, 1, T0_MS + 10, null, 'X', T0_MS + 3)).toBe(false);
    expect(await stores.dispatch.partByMessageId('carrier', 'm-1')).toEqual({ id: partId, recipient_id: seeded.recipientIds[0], state: 'submitted' });
    expect(await stores.dispatch.messageIdsAwaitingReceipt('carrier')).toEqual(['m-1']);
    expect(await stores.dispatch.notePartStatus(partId, 'ENROUTE', T0_MS + 4)).toBe(true);
    expect(await stores.dispatch.finishPart(partId, 'delivered', 'DELIVRD', null, T0_MS + 5)).toBe(true);
    expect(await stores.dispatch.finishPart(partId, 'undelivered', 'UNDELIV', 'E1', T0_MS + 6)).toBe(false);
    expect(await stores.dispatch.notePartStatus(partId, 'LATE', T0_MS + 7)).toBe(false);
    expect(await partOf(stores, seeded.recipientIds[0] as number)).toEqual({ part_number: 1, state: 'delivered', last_status: 'DELIVRD', final_at: T0_MS + 5 });
    expect(await stores.dispatch.messageIdsAwaitingReceipt('carrier')).toEqual([]);
  });

  it('requeue and fail only a submitting part; a requeued part is due at its next attempt, not before', async () => {
    const { stores } = await open();
    const seeded = await seedReadyCampaign(stores, { recipients: 2 });
    await dispatchAll(stores, seeded, 'carrier');
    const [a, b] = await stores.dispatch.claimableInCampaign('carrier', seeded.campaignId, T0_MS, 10) as [ClaimablePart, ClaimablePart];
    expect(await stores.dispatch.requeue(a.id, 1, T0_MS + 2000, 'THROTTLED', 'ESME_RTHROTTLED', T0_MS)).toBe(false);
    await stores.dispatch.markSubmitting(a.id, T0_MS);
    await stores.dispatch.markSubmitting(b.id, T0_MS);
    expect(await stores.dispatch.requeue(a.id, 1, T0_MS + 2000, 'THROTTLED', 'ESME_RTHROTTLED', T0_MS)).toBe(true);
    expect(await stores.dispatch.failPart(b.id, 1, 'REJECTD', 'ESME_RINVDSTADR', T0_MS)).toBe(true);
    expect(await stores.dispatch.failPart(b.id, 1, 'REJECTD', 'ESME_RINVDSTADR', T0_MS)).toBe(false);
    expect(await stores.dispatch.claimableInCampaign('carrier', seeded.campaignId, T0_MS + 1999, 10)).toEqual([]);
    expect((await stores.dispatch.claimableInCampaign('carrier', seeded.campaignId, T0_MS + 2000, 10)).map((p) => [p.id, p.attempts])).toEqual([[a.id, 1]]);
    expect(await stores.dispatch.queuedCampaigns('carrier', '', 10)).toEqual([seeded.campaignId]);
    expect(await stores.dispatch.queuedCampaigns('carrier', seeded.campaignId, 10)).toEqual([]);
    expect(await stores.dispatch.queuedCampaigns('other', '', 10)).toEqual([]);
  });

  it('batch units: many parts inserted in order, many recipients marked dispatched, many parts marked submitting once', async () => {
    const { stores } = await open();
    const seeded = await seedReadyCampaign(stores, { recipients: 3 });
    const [r1, r2, r3] = seeded.recipientIds as [number, number, number];
    const part = (recipientId: number, partNumber: number) => ({
      recipientId, campaignId: seeded.campaignId, partNumber, partsTotal: 2, concatReference: 9, transport: 'carrier',
      state: 'queued' as const, lastStatus: null, nextAttemptAt: T0_MS, finalAt: null,
    });
    await stores.dispatch.insertParts([part(r1, 1), part(r1, 2), part(r2, 1), part(r2, 2)], T0_MS);
    await stores.dispatch.insertParts([], T0_MS);
    await stores.dispatch.markRecipientsDispatched([r1, r2], T0_MS);
    expect((await stores.dispatch.waitingRecipients(seeded.campaignId, 10)).map((r) => r.id)).toEqual([r3]);
    const claimable = await stores.dispatch.claimableInCampaign('carrier', seeded.campaignId, T0_MS, 10);
    // Ids were given in the order the parts were handed over.
    expect(claimable.map((p) => [p.recipient_id, p.part_number])).toEqual([[r1, 1], [r1, 2], [r2, 1], [r2, 2]]);
    const ids = claimable.map((p) => p.id);
    expect(await stores.dispatch.markManySubmitting(ids.slice(0, 3), T0_MS + 1)).toEqual(new Set(ids.slice(0, 3)));
    // A part already submitting is not marked twice; the others are.
    expect(await stores.dispatch.markManySubmitting(ids, T0_MS + 2)).toEqual(new Set([ids[3]]));
    expect(await stores.dispatch.markManySubmitting([], T0_MS + 2)).toEqual(new Set());
  });

  it('lists campaigns with queued parts round robin after a cursor', async () => {
    const { stores } = await open();
    for (const [campaignId, clientName] of [['c-b', 'b'], ['c-a', 'a'], ['c-c', 'c']] as const) {
      await dispatchAll(stores, await seedReadyCampaign(stores, { recipients: 2, campaignId, clientName }), 'carrier');
    }
    expect(await stores.dispatch.queuedCampaigns('carrier', '', 10)).toEqual(['c-a', 'c-b', 'c-c']);
    expect(await stores.dispatch.queuedCampaigns('carrier', 'c-a', 1)).toEqual(['c-b']);
  });

  it('never gives one part to two claimers running at once, over separate connections', async () => {
    const backend = await open();
    const seeded = await seedReadyCampaign(backend.stores, { recipients: 60 });
    await dispatchAll(backend.stores, seeded, 'carrier');
    const nodes = [backend.stores, await backend.peer(), await backend.peer(), await backend.peer()];
    const claimedBy = nodes.map(() => [] as number[]);
    await Promise.all(nodes.map(async (stores, node) => {
      for (;;) {
        const batch = await stores.dispatch.claimableInCampaign('carrier', seeded.campaignId, T0_MS, 5);
        if (batch.length === 0) return;
        for (const part of batch) if (await stores.dispatch.markSubmitting(part.id, T0_MS)) claimedBy[node]?.push(part.id);
      }
    }));
    const all = claimedBy.flat();
    expect(all).toHaveLength(60);
    expect(new Set(all).size).toBe(60);
  });

  it('matches a receipt stored before the submit_sm_resp wrote the message id, once the id is written', async () => {
    const { stores } = await open();
    const seeded = await seedReadyCampaign(stores, { recipients: 1 });
    await dispatchAll(stores, seeded, 'carrier');
    const [part] = await stores.dispatch.claimableInCampaign('carrier', seeded.campaignId, T0_MS, 1) as [ClaimablePart];
    await stores.dispatch.markSubmitting(part.id, T0_MS);
    // The receipt beats the response: no part has message id m-9 yet, so it is parked.
    expect(await stores.dispatch.partByMessageId('carrier', 'm-9')).toBeUndefined();
    const receiptId = await stores.dispatch.insertReceipt({ transport: 'carrier', messageId: 'm-9', status: 'DELIVRD', final: true, errorCode: null,
      doneAt: '2512011200', raw: 'id:m-9 stat:DELIVRD', receivedAt: T0_MS + 1, matchState: 'pending', partId: null });
    // Another transport's receipt with the same id is not this part's.
    await stores.dispatch.insertReceipt({ transport: 'other', messageId: 'm-9', status: 'UNDELIV', final: true, errorCode: null,
      doneAt: null, raw: 'x', receivedAt: T0_MS + 1, matchState: 'pending', partId: null });
    expect(await stores.dispatch.markSubmitted(part.id, 'm-9', T0_MS + 2)).toBe(true);
    expect(await stores.dispatch.pendingReceipts('carrier', 'm-9')).toEqual([{ id: receiptId, status: 'DELIVRD', final: 1, error_code: null }]);
    await stores.dispatch.matchReceipt(receiptId, part.id);
    expect(await stores.dispatch.pendingReceipts('carrier', 'm-9')).toEqual([]);
    // The other transport's stays pending until it expires; an expiry takes only receipts older than the cutoff.
    expect(await stores.dispatch.expireReceipts(T0_MS + 1)).toEqual([]);
    expect(await stores.dispatch.expireReceipts(T0_MS + 2)).toEqual([
      { id: expect.any(Number), transport: 'other', message_id: 'm-9', status: 'UNDELIV', received_at: T0_MS + 1 },
    ]);
    const [detail] = await stores.admin.messagesTo('353870000000');
    expect(detail?.parts[0]?.receipts).toEqual([{ status: 'DELIVRD', final: 1, errorCode: null, doneAt: '2512011200', receivedAt: T0_MS + 1, raw: 'id:m-9 stat:DELIVRD' }]);
  });

  it('recovers after a crash: submitting parts are queued again, dispatched recipients without parts reopen', async () => {
    const { stores } = await open();
    const seeded = await seedReadyCampaign(stores, { recipients: 3 });
    const [first, second, third] = seeded.recipientIds as [number, number, number];
    await dispatchAll(stores, { ...seeded, recipientIds: [first, second] }, 'carrier');
    // A recipient marked dispatched whose parts never got written (not something the engine does: repaired anyway).
    await stores.dispatch.markRecipientDispatched(third, T0_MS);
    expect(await stores.dispatch.markCampaignDispatchedIfDone(seeded.campaignId, T0_MS)).toBe(true);
    const [a] = await stores.dispatch.claimableInCampaign('carrier', seeded.campaignId, T0_MS, 1) as [ClaimablePart];
    await stores.dispatch.markSubmitting(a.id, T0_MS);
    expect(await stores.dispatch.requeueAllSubmitting(T0_MS + 5)).toBe(1);
    expect(await stores.dispatch.requeueAllSubmitting(T0_MS + 6)).toBe(0);
    expect((await stores.dispatch.claimableInCampaign('carrier', seeded.campaignId, T0_MS, 10)).map((p) => p.id)).toContain(a.id);
    expect(await stores.dispatch.reopenOrphanedRecipients()).toBe(1);
    expect(await stores.dispatch.waitingRecipients(seeded.campaignId, 10)).toEqual([{ id: third, msisdn: '353870000002' }]);
    expect((await stores.dispatch.dueCampaigns(T0_MS, 10)).map((c) => c.id)).toEqual([seeded.campaignId]);
  });

  it('gives a receipt what its webhook needs and rolls the recipient up', async () => {
    const { stores } = await open();
    const seeded = await seedReadyCampaign(stores, { recipients: 1 });
    const recipientId = seeded.recipientIds[0] as number;
    expect(await stores.dispatch.recipientContext(recipientId)).toEqual({ id: recipientId, status: 'pending', last_status: null, msisdn: '353870000000',
      client_reference: null, client_id: seeded.clientId, sender: 'ACME', webhook_url: 'https://hooks.example/dlr' });
    await stores.dispatch.updateRecipient(recipientId, 'delivered', 'DELIVRD', T0_MS + 9);
    expect(await stores.campaigns.statusCounts(seeded.campaignId)).toEqual({ pending: 0, delivered: 1, undelivered: 0 });
  });
});
