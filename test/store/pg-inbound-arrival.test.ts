/**
 * The inbound arrival units (one arrival = one transaction, the seam's InboundStore.storeMessage /
 * storePart / completeStaleGroup) on a real PostgreSQL, and what a cluster adds: the two parts of a
 * message arriving on two nodes at the same moment make exactly one message (the group's advisory
 * lock), never two and never a group left waiting for the sweep.
 */
import { describe, expect, it } from 'vitest';
import type { InboundPartRow } from '../../src/store/entities.js';
import type { AssembleGroup, InboundDelivery } from '../../src/store/postgres/inbound-store.js';
import { createPgStores, type PgStores } from '../../src/store/postgres/stores.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { T0_MS, seedClient } from './conformance/seed.js';

const suite = usePostgresSuite();

async function nodes(count: number): Promise<PgStores[]> {
  return (await suite.openNodes(count)).map((database) => createPgStores(database.pool));
}

function delivery(publicId: string, text: string, incomplete = false): InboundDelivery {
  return {
    message: { publicId, transport: 'modem', sender: '353870000001', recipient: '50123', text, raw: 'raw', receivedAtMs: T0_MS, incomplete },
    webhookBody: JSON.stringify({ MessageId: publicId, Text: text }),
    optsOut: (keywords) => keywords.includes(text.trim().toLowerCase()),
  };
}

const assemble: AssembleGroup = (parts: readonly InboundPartRow[]) =>
  delivery(`g-${parts[0]?.reference}`, parts.map((p) => p.body).join(''), parts.length < (parts[0]?.total ?? 0));

describe('inbound arrivals on PostgreSQL', () => {
  it('stores, routes, opts out and queues the inbound webhook of a whole message in one unit', async () => {
    const [stores] = await nodes(1) as [PgStores];
    const { clientId } = await seedClient(stores);
    await stores.inbound.setInboundWebhook(clientId, 'https://hooks.example/in');
    await stores.inbound.setOptoutKeywords(clientId, ['stop']);
    await stores.inbound.addRoute(clientId, '50123', T0_MS);
    expect(await stores.inbound.storeMessage(delivery('m-1', 'hello'), T0_MS)).toEqual({ publicId: 'm-1', clientId, incomplete: false, optedOut: false });
    expect(await stores.inbound.storeMessage(delivery('m-2', 'STOP '), T0_MS)).toEqual({ publicId: 'm-2', clientId, incomplete: false, optedOut: true });
    expect(await stores.inbound.suppressedNumbers(clientId)).toEqual(new Set(['353870000001']));
    const due = await stores.webhooks.selectDueOutboxRows(T0_MS, 10);
    expect(due.map((d) => [d.kind, d.body])).toEqual([['inbound', '{"MessageId":"m-1","Text":"hello"}'], ['inbound', '{"MessageId":"m-2","Text":"STOP "}']]);
    await stores.inbound.removeRoute('50123');
    expect(await stores.inbound.storeMessage(delivery('m-3', 'hi'), T0_MS)).toEqual({ publicId: 'm-3', clientId: null, incomplete: false, optedOut: false });
    expect((await stores.inbound.listUnrouted(10)).map((m) => m.publicId)).toEqual(['m-3']);
  });

  it('keeps parts until the last one makes the message; a repeat is ignored; a stale group is made from what came', async () => {
    const [stores] = await nodes(1) as [PgStores];
    const key = { transport: 'modem', sender: '353870000001', recipient: '50123', scheme: 'udh8', reference: 7, total: 3 };
    const part = (sequence: number) => ({ sequence, coding: 'gsm7' as const, body: `p${sequence}`, raw: 'raw', received_at: T0_MS + sequence });
    expect(await stores.inbound.storePart(key, part(2), assemble, T0_MS)).toEqual({ kind: 'part-stored', stored: 1, total: 3 });
    expect(await stores.inbound.storePart(key, part(2), assemble, T0_MS)).toEqual({ kind: 'part-repeated' });
    expect(await stores.inbound.storePart(key, part(1), assemble, T0_MS)).toEqual({ kind: 'part-stored', stored: 2, total: 3 });
    expect(await stores.inbound.storePart(key, part(3), assemble, T0_MS)).toEqual({ kind: 'message', publicId: 'g-7', clientId: null, incomplete: false, optedOut: false });
    expect((await stores.inbound.listUnrouted(10)).map((m) => m.text)).toEqual(['p1p2p3']);
    expect(await stores.inbound.oldestPartAtMs()).toBeNull();
    const stale = { ...key, reference: 8 };
    await stores.inbound.storePart(stale, part(1), assemble, T0_MS);
    expect(await stores.inbound.completeStaleGroup(stale, assemble, T0_MS)).toEqual({ publicId: 'g-8', clientId: null, incomplete: true, optedOut: false });
    expect(await stores.inbound.completeStaleGroup(stale, assemble, T0_MS)).toBeUndefined();
  });

  it('makes exactly one message of each group whose two parts arrive on two nodes at once', async () => {
    const [a, b] = await nodes(2) as [PgStores, PgStores];
    const groups = Array.from({ length: 30 }, (_, reference) => ({ transport: 'smsc', sender: '353870000001', recipient: '50123', scheme: 'udh8', reference, total: 2 }));
    const part = (sequence: number) => ({ sequence, coding: 'gsm7' as const, body: `p${sequence}`, raw: 'raw', received_at: T0_MS });
    const outcomes = await Promise.all(groups.flatMap((key) => [a.inbound.storePart(key, part(1), assemble, T0_MS), b.inbound.storePart(key, part(2), assemble, T0_MS)]));
    expect(outcomes.filter((o) => o.kind === 'message')).toHaveLength(30);
    expect(outcomes.filter((o) => o.kind === 'part-stored')).toHaveLength(30);
    expect(await a.inbound.oldestPartAtMs()).toBeNull();
    const messages = await a.inbound.listUnrouted(100);
    expect(messages).toHaveLength(30);
    expect(new Set(messages.map((m) => m.publicId)).size).toBe(30);
    expect(messages.every((m) => m.text === 'p1p2')).toBe(true);
  });
});
