/**
 * Scenario set-up through the stores' own ports (no SQL of the tests' own, so the same code seeds
 * either backend): a client with a webhook URL, a user, and a campaign made ready with recipients,
 * each dispatched as parts queued on a transport.
 */
import type { Stores } from './backends.js';

export const T0_MS = 1_765_100_000_000;

export interface Seeded {
  clientId: number;
  userId: number;
  campaignId: string;
  recipientIds: number[];
}

export async function seedClient(stores: Stores, name = 'acme', webhookUrl: string | null = 'https://hooks.example/dlr'): Promise<{ clientId: number; userId: number }> {
  const clientId = await stores.auth.insertClient({ name, webhookUrl, webhookSecretEnc: webhookUrl === null ? null : 'sealed' }, T0_MS);
  const userId = await stores.auth.insertUser({ clientId, username: `${name}-user`, passwordHash: 'hash', isAdmin: false }, T0_MS);
  return { clientId, userId };
}

export async function seedReadyCampaign(
  stores: Stores,
  options: { campaignId?: string; recipients: number; clientName?: string; partsPerRecipient?: number },
): Promise<Seeded> {
  const { clientId, userId } = await seedClient(stores, options.clientName ?? 'acme');
  const campaignId = options.campaignId ?? 'c-0001';
  await stores.campaigns.insertCampaign({
    id: campaignId, clientId, userId, state: 'queued', name: 'spring', sender: 'ACME', text: 'hello', sendAtLocal: null,
    createAsDraft: false, shouldSaveList: false, requestRecipientsJson: '[]', createdAtMs: T0_MS,
  });
  await stores.campaigns.claimForProcessing(campaignId);
  const msisdns = Array.from({ length: options.recipients }, (_, i) => `35387${String(i).padStart(7, '0')}`);
  await stores.campaigns.appendRecipients(campaignId, msisdns.map((msisdn) => ({ msisdn, clientReference: null })), T0_MS);
  const partsPerRecipient = options.partsPerRecipient ?? 1;
  await stores.campaigns.markReady({
    campaignId, totalSent: options.recipients, textSent: 'hello', encoding: 'GSM-7', partsPerMessage: partsPerRecipient, sendAtMs: T0_MS,
    skippedCount: 0, readyAtMs: T0_MS,
  });
  const waiting = await stores.dispatch.waitingRecipients(campaignId, options.recipients + 1);
  return { clientId, userId, campaignId, recipientIds: waiting.map((r) => r.id) };
}

/** Queues one part (or partsPerRecipient) per waiting recipient on `transport`, due at T0_MS. */
export async function dispatchAll(stores: Stores, seeded: Seeded, transport: string, partsPerRecipient = 1): Promise<void> {
  for (const recipientId of seeded.recipientIds) {
    for (let part = 1; part <= partsPerRecipient; part++) {
      await stores.dispatch.insertPart({
        recipientId, campaignId: seeded.campaignId, partNumber: part, partsTotal: partsPerRecipient, concatReference: 7, transport,
        state: 'queued', lastStatus: null, nextAttemptAt: T0_MS, finalAt: null,
      }, T0_MS);
    }
    await stores.dispatch.markRecipientDispatched(recipientId, T0_MS);
  }
  await stores.dispatch.markCampaignDispatchedIfDone(seeded.campaignId, T0_MS);
}
