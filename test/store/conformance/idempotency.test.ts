/**
 * Store conformance: Idempotency-Key claims give the same answers on SQLite and PostgreSQL, also
 * between two nodes on one database: one owner of a fresh key, 409 while it is in flight, 422 for
 * another body, the first campaign replayed once it is stored, a takeover after the hold whose
 * first holder then stores nothing, and a fresh start after 24 hours.
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
