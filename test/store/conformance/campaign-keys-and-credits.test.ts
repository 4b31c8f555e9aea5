/**
 * Store conformance: Idempotency-Key claims and campaign reservations give the same answers on
 * SQLite and PostgreSQL. Keys, also between two nodes on one database: one owner of a fresh key,
 * 409 while it is in flight, 422 for another body, the first campaign replayed once it is stored, a
 * takeover after the hold whose first holder then stores nothing, a fresh start after 24 hours.
 * Credits: reserved with the campaign row or nothing stored, released with the ready mark and by a
 * failure.
 */
import { expect, it } from 'vitest';
import { IN_FLIGHT_HOLD_MS, KEY_LIFETIME_MS } from '../../../src/accounts/idempotency.js';
import type { NewCampaign } from '../../../src/store/sqlite/campaign-store.js';
import { describeEachBackend, type Stores } from './backends.js';
import { T0_MS, seedClient } from './seed.js';

function campaign(id: string, clientId: number, userId: number, key: string, claimedAtMs: number): NewCampaign {
  return {
    id, clientId, userId, state: 'queued', name: 'keyed', sender: 'ACME', text: 'hello', sendAtLocal: null, createAsDraft: false,
    shouldSaveList: false, requestRecipientsJson: '[]', createdAtMs: claimedAtMs, idempotencyKey: { key, claimedAtMs },
  };
}

async function campaignExists(stores: Stores, id: string): Promise<boolean> {
  return (await stores.campaigns.findCampaign(id)) !== undefined;
}

describeEachBackend('idempotency keys', (open) => {
  it('lets the first request proceed, answers 409 while it is in flight, 422 for another body, then replays its campaign', async () => {
    const { stores } = await open();
    const { clientId, userId } = await seedClient(stores);
    expect(await stores.idempotency.claim(clientId, 'k1', 'hash-a', T0_MS)).toEqual({ outcome: 'proceed', claimedAtMs: T0_MS });
    expect(await stores.idempotency.claim(clientId, 'k1', 'hash-a', T0_MS + 5)).toEqual({ outcome: 'conflict' });
    expect(await stores.idempotency.claim(clientId, 'k1', 'hash-b', T0_MS + 5)).toEqual({ outcome: 'mismatch' });
    expect(await stores.campaigns.insertCampaign(campaign('c-1', clientId, userId, 'k1', T0_MS))).toEqual({ outcome: 'stored', creditsReserved: null });
    expect(await stores.idempotency.claim(clientId, 'k1', 'hash-a', T0_MS + 10)).toEqual({ outcome: 'replay', campaignId: 'c-1' });
    expect(await stores.idempotency.claim(clientId, 'k1', 'hash-b', T0_MS + 10)).toEqual({ outcome: 'mismatch' });
    // Another client's key of the same name is its own.
    const other = await seedClient(stores, 'other');
    expect(await stores.idempotency.claim(other.clientId, 'k1', 'hash-b', T0_MS + 10)).toEqual({ outcome: 'proceed', claimedAtMs: T0_MS + 10 });
    // 24 hours after its first use the key starts afresh, whatever the body.
    expect(await stores.idempotency.claim(clientId, 'k1', 'hash-b', T0_MS + KEY_LIFETIME_MS)).toEqual({ outcome: 'proceed', claimedAtMs: T0_MS + KEY_LIFETIME_MS });
  });

  it('frees a released key, and lets a retry take over a key whose holder went silent past the hold; the old holder then stores nothing', async () => {
    const { stores } = await open();
    const { clientId, userId } = await seedClient(stores);
    await stores.idempotency.claim(clientId, 'freed', 'h', T0_MS);
    await stores.idempotency.release(clientId, 'freed', T0_MS);
    expect(await stores.idempotency.claim(clientId, 'freed', 'other', T0_MS + 1)).toEqual({ outcome: 'proceed', claimedAtMs: T0_MS + 1 });

    expect(await stores.idempotency.claim(clientId, 'k2', 'h', T0_MS)).toEqual({ outcome: 'proceed', claimedAtMs: T0_MS });
    expect(await stores.idempotency.claim(clientId, 'k2', 'h', T0_MS + IN_FLIGHT_HOLD_MS - 1)).toEqual({ outcome: 'conflict' });
    const takeover = await stores.idempotency.claim(clientId, 'k2', 'h', T0_MS + IN_FLIGHT_HOLD_MS);
    expect(takeover).toEqual({ outcome: 'proceed', claimedAtMs: T0_MS + IN_FLIGHT_HOLD_MS });
    expect(await stores.campaigns.insertCampaign(campaign('c-old', clientId, userId, 'k2', T0_MS))).toEqual({ outcome: 'key-lost' });
    expect(await campaignExists(stores, 'c-old')).toBe(false);
    // The old holder's release does not free the new holder's key.
    await stores.idempotency.release(clientId, 'k2', T0_MS);
    expect(await stores.idempotency.claim(clientId, 'k2', 'h', T0_MS + IN_FLIGHT_HOLD_MS + 1)).toEqual({ outcome: 'conflict' });
    expect((await stores.campaigns.insertCampaign(campaign('c-new', clientId, userId, 'k2', T0_MS + IN_FLIGHT_HOLD_MS))).outcome).toBe('stored');
    expect(await stores.idempotency.claim(clientId, 'k2', 'h', T0_MS + IN_FLIGHT_HOLD_MS + 2)).toEqual({ outcome: 'replay', campaignId: 'c-new' });
  });

  it('gives a fresh key to exactly one of two nodes claiming it at once', async () => {
    const backend = await open();
    const { clientId } = await seedClient(backend.stores);
    const peer = await backend.peer();
    for (let round = 0; round < 20; round++) {
      const key = `race-${round}`;
      const decisions = await Promise.all([
        backend.stores.idempotency.claim(clientId, key, 'h', T0_MS + round),
        peer.idempotency.claim(clientId, key, 'h', T0_MS + round),
      ]);
      expect(decisions.filter((d) => d.outcome === 'proceed')).toHaveLength(1);
      expect(decisions.filter((d) => d.outcome === 'conflict')).toHaveLength(1);
    }
  });
});

describeEachBackend('credits reserved with a campaign and settled by processing', (open) => {
  function newCampaign(id: string, clientId: number, userId: number, creditsNeeded: number | null): NewCampaign {
    return {
      id, clientId, userId, state: 'queued', name: 'paid', sender: 'ACME', text: 'hello', sendAtLocal: null, createAsDraft: false,
      shouldSaveList: false, requestRecipientsJson: '[]', createdAtMs: T0_MS, creditsNeeded,
    };
  }

  it('reserves with the row or stores nothing, writes prices and releases with the ready mark, releases all of a failed campaign', async () => {
    const backend = await open();
    const { stores } = backend;
    const { clientId, userId } = await seedClient(stores);
    // Unlimited until given a balance: stored, nothing reserved.
    expect(await stores.campaigns.insertCampaign(newCampaign('c-free', clientId, userId, 5))).toEqual({ outcome: 'stored', creditsReserved: null });
    await backend.applyCredits([{ clientId, kind: 'top-up', credits: 10, campaignId: null, note: null }], T0_MS);
    expect(await stores.campaigns.insertCampaign(newCampaign('c-big', clientId, userId, 11))).toEqual({ outcome: 'short', needed: 11, available: 10 });
    expect(await campaignExists(stores, 'c-big')).toBe(false);
    expect(await stores.campaigns.insertCampaign(newCampaign('c-1', clientId, userId, 6))).toEqual({ outcome: 'stored', creditsReserved: 6 });
    expect((await stores.campaigns.findCampaign('c-1'))?.credits_reserved).toBe(6);
    expect(await backend.creditSums(clientId)).toEqual({ balance: 10, reserved: 6 });

    expect((await stores.campaigns.claimForProcessing('c-1'))?.credits_reserved).toBe(6);
    await stores.campaigns.appendRecipients('c-1', [{ msisdn: '15551230000', clientReference: null, creditsPerPart: 3 }], T0_MS);
    expect(await stores.campaigns.markReady({
      campaignId: 'c-1', totalSent: 1, textSent: 'hello', encoding: 'GSM-7', partsPerMessage: 1, sendAtMs: T0_MS, skippedCount: 1, readyAtMs: T0_MS,
      credits: [{ clientId, kind: 'release', credits: -3, campaignId: 'c-1', note: null }],
    })).toBe(true);
    expect(await backend.creditSums(clientId)).toEqual({ balance: 10, reserved: 3 });

    expect(await stores.campaigns.insertCampaign(newCampaign('c-2', clientId, userId, 4))).toEqual({ outcome: 'stored', creditsReserved: 4 });
    await stores.campaigns.claimForProcessing('c-2');
    await stores.campaigns.markFailed('c-2', 'broken');
    expect(await backend.creditSums(clientId)).toEqual({ balance: 10, reserved: 3 });
  });
});
