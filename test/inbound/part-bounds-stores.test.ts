/**
 * The bounds on held parts and the sliced sweep give the same answers on SQLite (a real file) and
 * PostgreSQL (a throwaway server): a first part over the per-originator or the total bound is
 * refused and not stored, a repeat is still a repeat, the part that completes a group is taken at
 * the bound, and completeStaleGroups makes at most one page of groups per call, oldest first,
 * with one inbound outbox row per routed message.
 */
import { expect, it } from 'vitest';
import { exceededPartLimit, partAdmission } from '../../src/inbound/part-limits.js';
import type { InboundPartRow } from '../../src/store/entities.js';
import type { AssembleGroup, AssembleStaleGroup, InboundDelivery, PartGroupKey } from '../../src/store/sqlite/inbound-store.js';
import { describeEachBackend } from '../store/conformance/backends.js';
import { T0_MS, seedClient } from '../store/conformance/seed.js';

function delivery(publicId: string, key: PartGroupKey, parts: readonly InboundPartRow[]): InboundDelivery {
  return {
    message: { publicId, transport: key.transport, sender: key.sender, recipient: key.recipient, text: parts.map((p) => p.body).join(''), raw: 'raw', receivedAtMs: T0_MS, incomplete: parts.length < key.total },
    webhookBody: JSON.stringify({ MessageId: publicId }),
    optsOut: () => false,
  };
}

const keyOf = (sender: string, reference: number, total = 2): PartGroupKey => ({ transport: 'carrier', sender, recipient: '50123', scheme: 'udh16', reference, total });
const assembleFor = (key: PartGroupKey): AssembleGroup => (parts) => delivery(`${key.sender}-${key.reference}`, key, parts);
const assembleStale: AssembleStaleGroup = (key, parts) => delivery(`${key.sender}-${key.reference}`, key, parts);
const part = (sequence: number, receivedAtMs = T0_MS) => ({ sequence, coding: 'gsm7' as const, body: `p${sequence}`, raw: 'raw', received_at: receivedAtMs });
/** The smallest bounds the config allows are 255; the decision is the same at any size. */
const admit = partAdmission({ maxPartsPerOriginator: 3, maxParts: 5 });

it('decides by the counts before the part: at a bound a new group waits, the completing part is taken', () => {
  const limits = { maxPartsPerOriginator: 3, maxParts: 5 };
  expect(exceededPartLimit({ originatorParts: 2, totalParts: 4, completesGroup: false }, limits)).toBeNull();
  expect(exceededPartLimit({ originatorParts: 3, totalParts: 3, completesGroup: false }, limits)).toBe('originator');
  expect(exceededPartLimit({ originatorParts: 1, totalParts: 5, completesGroup: false }, limits)).toBe('total');
  expect(exceededPartLimit({ originatorParts: 3, totalParts: 5, completesGroup: true }, limits)).toBeNull();
});

describeEachBackend('inbound part bounds and the sliced sweep', (open) => {
  it('refuses over the per-originator and the total bound, and takes the part that completes a group', async () => {
    const { stores } = await open();
    const inbound = stores.inbound;
    for (let reference = 0; reference < 3; reference++) {
      expect(await inbound.storePart(keyOf('353861', reference), part(1), assembleFor(keyOf('353861', reference)), T0_MS, admit)).toEqual({ kind: 'part-stored', stored: 1, total: 2 });
    }
    expect(await inbound.storePart(keyOf('353861', 9), part(1), assembleFor(keyOf('353861', 9)), T0_MS, admit))
      .toEqual({ kind: 'part-refused', limit: 'originator', originatorParts: 3, totalParts: 3 });
    expect(await inbound.storePart(keyOf('353861', 0), part(1), assembleFor(keyOf('353861', 0)), T0_MS, admit)).toEqual({ kind: 'part-repeated' });
    expect(await inbound.storePart(keyOf('353862', 0), part(1), assembleFor(keyOf('353862', 0)), T0_MS, admit)).toMatchObject({ kind: 'part-stored' });
    expect(await inbound.storePart(keyOf('353863', 0), part(1), assembleFor(keyOf('353863', 0)), T0_MS, admit)).toMatchObject({ kind: 'part-stored' });
    expect(await inbound.storePart(keyOf('353864', 0), part(1), assembleFor(keyOf('353864', 0)), T0_MS, admit))
      .toEqual({ kind: 'part-refused', limit: 'total', originatorParts: 0, totalParts: 5 });
    expect(await inbound.storePart(keyOf('353861', 1), part(2), assembleFor(keyOf('353861', 1)), T0_MS, admit)).toMatchObject({ kind: 'message', incomplete: false });
    expect(await inbound.oldestPartAtMs()).toBe(T0_MS);
  });

  it('sweeps stale groups a page at a time, oldest first, with an outbox row per routed message', async () => {
    const { stores } = await open();
    const { clientId } = await seedClient(stores);
    await stores.inbound.addRoute(clientId, '50123', T0_MS);
    await stores.inbound.setInboundWebhook(clientId, 'https://hooks.example/in');
    for (let reference = 0; reference < 7; reference++) {
      await stores.inbound.storePart(keyOf('353861', reference, 3), part(1, T0_MS + reference), assembleFor(keyOf('353861', reference, 3)), T0_MS);
      await stores.inbound.storePart(keyOf('353861', reference, 3), part(2, T0_MS + reference), assembleFor(keyOf('353861', reference, 3)), T0_MS);
    }
    // A page of 4 parts holds 2 groups (two parts each), the oldest.
    const first = await stores.inbound.completeStaleGroups(T0_MS + 100, 4, assembleStale, T0_MS + 100);
    expect(first.map((g) => [g.key.reference, g.stored.incomplete])).toEqual([[0, true], [1, true]]);
    const rest: number[] = [];
    for (;;) {
      const page = await stores.inbound.completeStaleGroups(T0_MS + 100, 4, assembleStale, T0_MS + 100);
      if (page.length === 0) break;
      rest.push(...page.map((g) => g.key.reference));
    }
    expect(rest).toEqual([2, 3, 4, 5, 6]);
    expect(await stores.inbound.oldestPartAtMs()).toBeNull();
    const due = await stores.webhooks.selectDueOutboxRows(T0_MS + 100, 100);
    expect(due.filter((row) => row.kind === 'inbound')).toHaveLength(7);
  });

  it('leaves groups younger than the cutoff alone', async () => {
    const { stores } = await open();
    await stores.inbound.storePart(keyOf('353861', 1), part(1, T0_MS), assembleFor(keyOf('353861', 1)), T0_MS);
    await stores.inbound.storePart(keyOf('353861', 2), part(1, T0_MS + 50), assembleFor(keyOf('353861', 2)), T0_MS);
    expect((await stores.inbound.completeStaleGroups(T0_MS + 10, 100, assembleStale, T0_MS + 100)).map((g) => g.key.reference)).toEqual([1]);
    expect(await stores.inbound.completeStaleGroups(T0_MS + 10, 100, assembleStale, T0_MS + 100)).toEqual([]);
    expect(await stores.inbound.oldestPartAtMs()).toBe(T0_MS + 50);
  });
});
