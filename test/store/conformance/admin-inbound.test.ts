/**
 * Store conformance: the admin reads, the status queries and the inbound store
 * give the same answers on SQLite and PostgreSQL (key names, 0/1 flags, counts as numbers, order).
 */
import { expect, it } from 'vitest';
import type { ClaimablePart } from '../../../src/store/sqlite/dispatch-store.js';
import { describeEachBackend } from './backends.js';
import { T0_MS, dispatchAll, seedClient, seedReadyCampaign } from './seed.js';

describeEachBackend('admin, status and inbound queries', (open) => {
  it('lists clients, users, senders and tokens with the same keys and flags', async () => {
    const { stores } = await open();
    const { clientId, userId } = await seedClient(stores, 'acme');
    await seedClient(stores, 'bare', null);
    await stores.auth.insertSender({ clientId, name: 'ACME', type: 1 }, T0_MS);
    const patId = await stores.auth.insertPat({ userId, tokenHash: 'th', tokenHint: 'wxyz', expiresAt: T0_MS + 5 }, T0_MS);
    expect(await stores.admin.listClients()).toEqual([
      { id: clientId, name: 'acme', active: 1, webhookUrl: 'https://hooks.example/dlr', signed: 1, users: 1, senders: 1, createdAt: T0_MS },
      { id: clientId + 1, name: 'bare', active: 1, webhookUrl: null, signed: 0, users: 1, senders: 0, createdAt: T0_MS },
    ]);
    expect(await stores.admin.listUsers(clientId)).toEqual([{ id: userId, username: 'acme-user', client: 'acme', isAdmin: 0, active: 1, createdAt: T0_MS }]);
    expect((await stores.admin.listUsers()).map((u) => u.username)).toEqual(['acme-user', 'bare-user']);
    expect(await stores.admin.listSenders()).toEqual([{ id: expect.any(Number), client: 'acme', name: 'ACME', type: 1, createdAt: T0_MS }]);
    expect(await stores.admin.tokensOfUser(userId)).toEqual([{ id: patId, hint: 'wxyz', createdAt: T0_MS, lastUsedAt: null, expiresAt: T0_MS + 5, revokedAt: null }]);
    expect(await stores.admin.tokenById(patId)).toEqual({ id: patId, username: 'acme-user', revokedAt: null });
    expect(await stores.admin.removeSender(clientId, 'ACME')).toBe(true);
    expect(await stores.admin.removeSender(clientId, 'ACME')).toBe(false);
    await stores.auth.insertRefreshSession({ id: 's', user_id: userId, client_id: 'x', family_id: 'f', token_hash: 'rh', created_at: T0_MS, expires_at: T0_MS + 9 });
    expect(await stores.admin.setUserPassword(userId, 'new', T0_MS + 1)).toEqual({ refreshSessionsRevoked: 1 });
    expect((await stores.auth.userById(userId))?.passwordHash).toBe('new');
  });

  it('shows campaigns, their detail and progress the same way', async () => {
    const { stores } = await open();
    const seeded = await seedReadyCampaign(stores, { recipients: 3 });
    await dispatchAll(stores, { ...seeded, recipientIds: seeded.recipientIds.slice(0, 2) }, 'carrier');
    const [part] = await stores.dispatch.claimableInCampaign('carrier', seeded.campaignId, T0_MS, 1) as [ClaimablePart];
    await stores.dispatch.markSubmitting(part.id, T0_MS + 1);
    await stores.dispatch.markSubmitted(part.id, 'm-1', T0_MS + 2);
    await stores.webhooks.insertOutboxRow({ clientId: seeded.clientId, recipientId: part.recipient_id, body: '{}', nowMs: T0_MS + 3 });
    expect(await stores.admin.listCampaigns({ limit: 5 })).toEqual([{ id: seeded.campaignId, client: 'acme', state: 'ready', name: 'spring', sender: 'ACME',
      createdAt: T0_MS, sendAt: T0_MS, totalSent: 3, counts: { pending: 3, delivered: 0, undelivered: 0 } }]);
    expect(await stores.admin.listCampaigns({ state: 'failed', limit: 5 })).toEqual([]);
    expect(await stores.admin.campaignDetail(seeded.campaignId)).toMatchObject({
      id: seeded.campaignId, client: 'acme', username: 'acme-user', encoding: 'GSM-7', partsPerMessage: 1, totalSent: 3, skipped: 0,
      parts: { queued: 1, submitting: 0, submitted: 1, delivered: 0, undelivered: 0 }, firstSubmittedAt: T0_MS + 2, lastSubmittedAt: T0_MS + 2,
      lastFinalAt: null, webhooks: { pending: 1, delivered: 0, dead: 0 }, recipients: { pending: 3, delivered: 0, undelivered: 0 },
    });
    expect(await stores.admin.campaignDetail('nope')).toBeUndefined();
    expect(await stores.status.campaignsInProgress(10)).toEqual([{ id: seeded.campaignId, name: 'spring', client: 'acme', state: 'ready', createdAtMs: T0_MS,
      total: 3, delivered: 0, undelivered: 0, pending: 3, sent: 1 }]);
    expect(await stores.status.queuedPartsByTransport(['carrier', 'sim'])).toEqual([
      { transport: 'carrier', queued: 1, submitting: 0 }, { transport: 'sim', queued: 0, submitting: 0 },
    ]);
    expect(await stores.status.webhooksByClient()).toEqual([{ clientId: seeded.clientId, client: 'acme', hasWebhook: true, pending: 1, dead: 0 }]);
    // The queue age metric's source: the oldest due queued part (none due before it was queued), and the pending webhooks.
    const [carrierDue, simDue] = await stores.status.oldestDueByTransport(['carrier', 'sim'], T0_MS + 3_600_000);
    expect(carrierDue).toEqual({ transport: 'carrier', oldestDueAtMs: expect.any(Number) });
    expect(carrierDue?.oldestDueAtMs).toBeLessThanOrEqual(T0_MS + 3_600_000);
    expect(simDue).toEqual({ transport: 'sim', oldestDueAtMs: null });
    expect(await stores.status.oldestDueByTransport(['carrier'], 0)).toEqual([{ transport: 'carrier', oldestDueAtMs: null }]);
    expect(await stores.status.pendingWebhookCount()).toBe(1);
    expect(await stores.status.deadLetterCount()).toBe(0);
    expect(await stores.status.probeWritable(250)).toEqual({ ok: true });
  });

  it('stores inbound parts once, groups them, and lists messages per client in storage order', async () => {
    const { stores } = await open();
    const { clientId } = await seedClient(stores);
    const key = { transport: 'modem', sender: '353870000001', recipient: '50123', scheme: 'udh8', reference: 42, total: 2 };
    const part = (sequence: number, receivedAt: number) => ({ ...key, sequence, coding: 'gsm7' as const, body: `p${sequence}`, raw: 'raw', received_at: receivedAt });
    expect(await stores.inbound.insertPart(part(2, T0_MS + 1))).toBe(true);
    expect(await stores.inbound.insertPart(part(1, T0_MS))).toBe(true);
    expect(await stores.inbound.insertPart(part(1, T0_MS))).toBe(false);
    expect((await stores.inbound.groupParts(key)).map((p) => [p.sequence, p.body])).toEqual([[1, 'p1'], [2, 'p2']]);
    expect(await stores.inbound.staleGroups(T0_MS)).toEqual([key]);
    expect(await stores.inbound.oldestPartAtMs()).toBe(T0_MS);
    await stores.inbound.deleteGroup(key);
    expect(await stores.inbound.oldestPartAtMs()).toBeNull();
    await stores.inbound.addRoute(clientId, '50123', T0_MS);
    expect(await stores.inbound.routeClientId('50123')).toBe(clientId);
    expect(await stores.inbound.route('50123')).toEqual({ address: '50123', clientId, clientName: 'acme', createdAtMs: T0_MS });
    const message = { transport: 'modem', sender: '353870000001', recipient: '50123', text: 'hi', raw: 'r', clientId, incomplete: false };
    const first = await stores.inbound.insertMessage({ ...message, publicId: 'p1', receivedAtMs: T0_MS + 5 });
    const second = await stores.inbound.insertMessage({ ...message, publicId: 'p2', receivedAtMs: T0_MS + 1, incomplete: true });
    await stores.inbound.insertMessage({ ...message, publicId: 'p3', receivedAtMs: T0_MS + 2, clientId: null });
    expect((await stores.inbound.listForClient(clientId, { sinceMs: null, afterId: 0, maxRows: 10 })).map((m) => [m.id, m.publicId, m.incomplete, m.clientName]))
      .toEqual([[first, 'p1', false, 'acme'], [second, 'p2', true, 'acme']]);
    expect((await stores.inbound.listForClient(clientId, { sinceMs: T0_MS + 3, afterId: 0, maxRows: 10 })).map((m) => m.publicId)).toEqual(['p1']);
    expect((await stores.inbound.listUnrouted(10)).map((m) => [m.publicId, m.clientName])).toEqual([['p3', null]]);
    expect((await stores.inbound.listRecent(2)).map((m) => m.publicId)).toEqual(['p3', 'p1']);
    expect(await stores.inbound.removeRoute('50123')).toBe(true);
    expect(await stores.inbound.routeClientId('50123')).toBeNull();
  });

  it('keeps opt-out keywords and the suppression list per client', async () => {
    const { stores } = await open();
    const { clientId } = await seedClient(stores);
    expect(await stores.inbound.optoutKeywords(clientId)).toEqual([]);
    await stores.inbound.setOptoutKeywords(clientId, ['stop', 'end']);
    expect(await stores.inbound.optoutKeywords(clientId)).toEqual(['stop', 'end']);
    expect(await stores.inbound.addOptout(clientId, '353870000002', 'keyword', T0_MS + 1)).toBe(true);
    expect(await stores.inbound.addOptout(clientId, '353870000001', 'admin', T0_MS)).toBe(true);
    expect(await stores.inbound.addOptout(clientId, '353870000001', 'admin', T0_MS + 9)).toBe(false);
    expect(await stores.inbound.listOptouts(clientId)).toEqual([
      { msisdn: '353870000001', source: 'admin', createdAtMs: T0_MS }, { msisdn: '353870000002', source: 'keyword', createdAtMs: T0_MS + 1 },
    ]);
    expect(await stores.inbound.suppressedNumbers(clientId)).toEqual(new Set(['353870000001', '353870000002']));
    expect(await stores.inbound.removeOptout(clientId, '353870000001')).toBe(true);
    expect(await stores.inbound.clientName(clientId)).toBe('acme');
    expect((await stores.inbound.clientByName('acme'))?.id).toBe(clientId);
    await stores.undecodable.insert({ transport: 'modem', device: '/dev/ttyUSB0', hex: '00ff', reasonCode: 'PDU_TRUNCATED', reason: 'short', receivedAtMs: T0_MS });
    expect(await stores.undecodable.list()).toEqual([{ id: expect.any(Number), transport: 'modem', device: '/dev/ttyUSB0', hex: '00ff',
      reason_code: 'PDU_TRUNCATED', reason: 'short', received_at: T0_MS }]);
  });
});
