/**
 * The materialise planner (src/engine/steps/materialise.ts), pure: which due campaigns get how many
 * recipients of a pass, the parts each recipient becomes, the recipients finished at once when no
 * running transport serves them (with their status and Delivery Receipt), and the campaigns that
 * may be done. No database: the facts are what the store would have read.
 */
import { describe, expect, it } from 'vitest';
import { mergeMovements } from '../../../src/accounts/credits.js';
import { CampaignPlans } from '../../../src/engine/campaign-plans.js';
import { RouteTable } from '../../../src/engine/routing.js';
import { concatReferenceFor } from '../../../src/sms/udh.js';
import { materialiseNeedsOwnSync, NO_ROUTE_STATUS, planMaterialise, planShares, type Routing } from '../../../src/engine/steps/materialise.js';
import type { DueRecipient, ReadyCampaign } from '../../../src/store/dispatch-steps.js';

const NOW = 1_700_000_000_000;
const CAP = 100;

const campaign = (id: string, waiting: number, extra: Partial<ReadyCampaign> = {}): ReadyCampaign => ({
  id, client_id: 7, sender: 'Acme', text: 'Hello', text_sent: 'Hello', send_at: NOW - 1_000, waiting, ...extra,
});

let nextId = 1;
const recipient = (campaignId: string, msisdn: string, extra: Partial<DueRecipient> = {}): DueRecipient => ({
  id: nextId++, campaign_id: campaignId, msisdn, status: 'pending', last_status: null, client_reference: `ref-${msisdn}`, client_id: 7, client_name: 'acme', sender: 'Acme',
  webhook_url: 'https://hooks.example/dlr', credits_per_part: 0, ...extra,
});

const routing: Routing = {
  routes: new RouteTable([{ prefix: '35387', transport: 'carrier' }, { prefix: '35386', transport: 'modem' }]),
  // 'modem' is routed to but not running.
  conditions: new Map([['carrier', { up: true }]]),
};

const plan = (ready: ReadyCampaign[], taken: DueRecipient[]) =>
  planMaterialise({ ready, cap: CAP, taken, plans: new CampaignPlans(), routing, nowMs: NOW });

describe('planShares: a pass shared fairly among due campaigns', () => {
  it('splits the batch evenly and gives what a small campaign cannot use to the large ones', () => {
    expect(planShares([campaign('large-1', CAP), campaign('small', 3), campaign('large-2', CAP)], 60, NOW)).toEqual([
      { campaignId: 'large-1', take: 29 },
      { campaignId: 'small', take: 3 },
      { campaignId: 'large-2', take: 28 },
    ]);
  });

  it('gives a campaign alone the whole batch, and leaves out campaigns with nobody waiting', () => {
    expect(planShares([campaign('large', CAP), campaign('empty', 0)], 50, NOW)).toEqual([{ campaignId: 'large', take: 50 }]);
  });

  it('does not materialise a campaign whose send time is still in the future', () => {
    const later = campaign('later', 40, { send_at: NOW + 60_000 });
    expect(planShares([later, campaign('now', 5)], 50, NOW)).toEqual([{ campaignId: 'now', take: 5 }]);
    // Due exactly at its send time; a campaign with none is due at once.
    expect(planShares([campaign('at', 2, { send_at: NOW }), campaign('unset', 2, { send_at: null })], 50, NOW)).toEqual([
      { campaignId: 'at', take: 2 }, { campaignId: 'unset', take: 2 },
    ]);
  });
});

describe('planMaterialise', () => {
  it('makes one queued part per SMS part with the recipient\'s concatenation reference, and marks the recipients dispatched', () => {
    const long = campaign('long', 2, { text: 'x'.repeat(200), text_sent: 'x'.repeat(200) });
    const [a, b] = [recipient('long', '353870000001'), recipient('long', '353870000002')];
    const result = plan([long], [a!, b!]);
    expect(result.parts.map((p) => [p.recipientId, p.partNumber, p.partsTotal, p.state, p.transport])).toEqual([
      [a!.id, 1, 2, 'queued', 'carrier'], [a!.id, 2, 2, 'queued', 'carrier'],
      [b!.id, 1, 2, 'queued', 'carrier'], [b!.id, 2, 2, 'queued', 'carrier'],
    ]);
    expect(result.parts.every((p) => p.nextAttemptAt === NOW && p.finalAt === null && p.lastStatus === null)).toBe(true);
    expect(result.parts.filter((p) => p.recipientId === a!.id).map((p) => p.concatReference)).toEqual([concatReferenceFor(a!.id), concatReferenceFor(a!.id)]);
    expect(result.dispatched).toEqual([a!.id, b!.id]);
    expect(result.recipients).toBe(2);
    expect([...result.queuedByTransport]).toEqual([['carrier', 4]]);
    expect(result.statuses).toEqual([]);
    expect(result.webhooks).toEqual([]);
    expect(result.credits).toEqual([]);
  });

  it('prices each part at its recipient\'s credits per part, and releases what a recipient no route matches reserved', () => {
    const long = campaign('priced', 3, { client_id: 9, text: 'x'.repeat(200), text_sent: 'x'.repeat(200) });
    const routed = recipient('priced', '353870000021', { client_id: 9, credits_per_part: 3 });
    const noRoute = recipient('priced', '447700900021', { client_id: 9, credits_per_part: 2 });
    const unpriced = recipient('priced', '447700900022', { client_id: 9, credits_per_part: 0 });
    const result = plan([long], [routed, noRoute, unpriced]);
    expect(result.parts.map((p) => [p.recipientId, p.partNumber, p.credits])).toEqual([
      [routed.id, 1, 3], [routed.id, 2, 3], [noRoute.id, 1, 2], [noRoute.id, 2, 2], [unpriced.id, 1, 0], [unpriced.id, 2, 0],
    ]);
    // Two parts at 2 credits will never be sent: 4 released; the unpriced recipient moves nothing.
    expect(mergeMovements(result.credits)).toEqual([{ clientId: 9, kind: 'release', credits: -4, campaignId: 'priced', note: null }]);
  });

  it('finishes a recipient no running transport serves as NO_ROUTE, with its status and one Delivery Receipt', () => {
    const c = campaign('c', 3);
    const routed = recipient('c', '353870000001');
    const noRoute = recipient('c', '447700900001');
    const notRunning = recipient('c', '353860000001');
    const result = plan([c], [routed, noRoute, notRunning]);
    expect(result.parts.filter((p) => p.state === 'undelivered').map((p) => [p.recipientId, p.transport, p.lastStatus, p.finalAt])).toEqual([
      [noRoute.id, null, NO_ROUTE_STATUS, NOW], [notRunning.id, null, NO_ROUTE_STATUS, NOW],
    ]);
    // Every taken recipient has its parts now, routed or not.
    expect(result.dispatched).toEqual([routed.id, noRoute.id, notRunning.id]);
    expect(result.statuses).toEqual([
      { recipientId: noRoute.id, status: 'undelivered', lastStatus: NO_ROUTE_STATUS },
      { recipientId: notRunning.id, status: 'undelivered', lastStatus: NO_ROUTE_STATUS },
    ]);
    expect(result.webhooks).toEqual([
      { clientId: 7, recipientId: noRoute.id, to: '447700900001', from: 'Acme', status: NO_ROUTE_STATUS, clientReference: 'ref-447700900001' },
      { clientId: 7, recipientId: notRunning.id, to: '353860000001', from: 'Acme', status: NO_ROUTE_STATUS, clientReference: 'ref-353860000001' },
    ]);
    // For the warning: the transport the route named, when it named one.
    expect(result.unrouted).toEqual([
      { campaignId: 'c', msisdn: '447700900001', routed: undefined },
      { campaignId: 'c', msisdn: '353860000001', routed: 'modem' },
    ]);
    expect([...result.queuedByTransport]).toEqual([['carrier', 1]]);
  });

  it('writes the status but queues no webhook for a client without a webhook URL', () => {
    const lonely = recipient('c', '447700900002', { webhook_url: null });
    const result = plan([campaign('c', 1)], [lonely]);
    expect(result.statuses).toEqual([{ recipientId: lonely.id, status: 'undelivered', lastStatus: NO_ROUTE_STATUS }]);
    expect(result.webhooks).toEqual([]);
  });

  it('skips a recipient that is final already: no status change, no webhook', () => {
    const finished = recipient('c', '447700900003', { status: 'undelivered', last_status: 'EXPIRED' });
    const result = plan([campaign('c', 1)], [finished]);
    expect(result.dispatched).toEqual([finished.id]);
    expect(result.statuses).toEqual([]);
    expect(result.webhooks).toEqual([]);
  });

  it('closes only due campaigns whose every waiting recipient was counted and taken', () => {
    const emptied = campaign('emptied', 2);
    const partly = campaign('partly', 5);
    const atCap = campaign('at-cap', CAP);
    const nobody = campaign('nobody', 0);
    const later = campaign('later', 0, { send_at: NOW + 1 });
    const taken = [recipient('emptied', '353870000010'), recipient('emptied', '353870000011'), recipient('partly', '353870000012'), recipient('at-cap', '353870000013')];
    expect(plan([emptied, partly, atCap, nobody, later], taken).closeCampaigns).toEqual(['emptied', 'nobody']);
  });
});

describe('materialiseNeedsOwnSync: which passes must reach the disk at their own commit', () => {
  it('lets a pass that only queues parts wait for the next synchronous commit (its parts leave only after a claim commits)', () => {
    // More waiting than taken: the campaign is not closed by this pass.
    const queued = plan([campaign('c', CAP)], [recipient('c', '353871000001'), recipient('c', '353871000002')]);
    expect(queued.parts.length).toBe(2);
    expect(materialiseNeedsOwnSync(queued)).toBe(false);
  });

  it('syncs a pass that finishes a recipient with no running transport (its Delivery Receipt may be sent once committed)', () => {
    const unrouted = plan([campaign('c', CAP)], [recipient('c', '353871000003'), recipient('c', '353861000004')]);
    expect(unrouted.webhooks.length).toBe(1);
    expect(materialiseNeedsOwnSync(unrouted)).toBe(true);
    // Without a webhook URL the status change alone still needs it.
    const noHook = plan([campaign('c', CAP)], [recipient('c', '353861000005', { webhook_url: null })]);
    expect(noHook.webhooks.length).toBe(0);
    expect(materialiseNeedsOwnSync(noHook)).toBe(true);
  });

  it('syncs a pass that closes a campaign', () => {
    const last = plan([campaign('c', 1)], [recipient('c', '353871000006')]);
    expect(last.closeCampaigns).toEqual(['c']);
    expect(materialiseNeedsOwnSync(last)).toBe(true);
  });
});
