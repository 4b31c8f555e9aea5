/**
 * Store conformance: the webhook outbox on SQLite and PostgreSQL: pending ->
 * delivered | retry | dead, dead letters listed, replayed and redriven as fresh series with the
 * same event id.
 */
import { expect, it } from 'vitest';
import { describeEachBackend } from './backends.js';
import { T0_MS, seedClient } from './seed.js';

const URL = 'https://hooks.example/dlr';

describeEachBackend('webhook outbox', (open) => {
  it('queues events only for a client with a URL for their kind', async () => {
    const { stores } = await open();
    const { clientId } = await seedClient(stores, 'acme');
    const { clientId: silent } = await seedClient(stores, 'quiet', null);
    expect(await stores.webhooks.insertOutboxRow({ clientId, recipientId: null, body: '{"a":1}', nowMs: T0_MS })).toBe(true);
    expect(await stores.webhooks.insertOutboxRow({ clientId: silent, recipientId: null, body: '{}', nowMs: T0_MS })).toBe(false);
    expect(await stores.webhooks.insertOutboxRow({ kind: 'inbound', clientId, recipientId: null, body: '{}', nowMs: T0_MS })).toBe(false);
    await stores.inbound.setInboundWebhook(clientId, 'https://hooks.example/in');
    expect(await stores.webhooks.insertOutboxRow({ kind: 'inbound', clientId, recipientId: null, body: '{"in":1}', nowMs: T0_MS + 1 })).toBe(true);
    const due = await stores.webhooks.selectDueOutboxRows(T0_MS + 1, 10);
    expect(due.map((d) => [d.kind, d.webhookUrl, d.body, d.attempts, d.createdAt, d.webhookSecretEnc])).toEqual([
      ['receipt', URL, '{"a":1}', 0, T0_MS, 'sealed'], ['inbound', 'https://hooks.example/in', '{"in":1}', 0, T0_MS + 1, 'sealed'],
    ]);
    expect(due.every((d) => typeof d.eventId === 'string' && /^[0-9a-f-]{36}$/.test(d.eventId))).toBe(true);
    expect(await stores.webhooks.assignEventId(due[0]!.id)).toBe(due[0]!.eventId);
    expect(await stores.webhooks.earliestPendingAttemptAt()).toBe(T0_MS);
  });

  it('records attempts: retry moves the due time, delivered and dead are final, a non-pending row is left alone', async () => {
    const { stores } = await open();
    const { clientId } = await seedClient(stores);
    for (let i = 0; i < 3; i++) await stores.webhooks.insertOutboxRow({ clientId, recipientId: null, body: `{"n":${i}}`, nowMs: T0_MS });
    const [a, b, c] = (await stores.webhooks.selectDueOutboxRows(T0_MS, 10)).map((d) => d.id) as [number, number, number];
    await stores.webhooks.recordAttempts([
      { id: a, kind: 'delivered', attempts: 1, atMs: T0_MS + 1 },
      { id: b, kind: 'retry', attempts: 1, nextAttemptAt: T0_MS + 2000, lastError: 'HTTP_503' },
      { id: c, kind: 'dead', attempts: 4, atMs: T0_MS + 3, lastError: 'HTTP_503', reason: 'transient', url: URL },
    ]);
    await stores.webhooks.recordAttempts([{ id: a, kind: 'retry', attempts: 2, nextAttemptAt: T0_MS + 9, lastError: 'late' }]);
    expect(await stores.webhooks.outboxStatesOf([a, b, c, 999])).toEqual(expect.arrayContaining(['delivered', 'pending', 'dead']));
    expect(await stores.webhooks.countOutboxByState()).toEqual({ pending: 1, delivered: 1, dead: 1 });
    expect(await stores.webhooks.selectDueOutboxRows(T0_MS + 1999, 10)).toEqual([]);
    expect((await stores.webhooks.selectDueOutboxRows(T0_MS + 2000, 10)).map((d) => [d.id, d.attempts])).toEqual([[b, 1]]);
    expect(await stores.status.deadLetterCount()).toBe(1);
  });

  it('lists, replays and redrives dead letters as fresh series with their event ids', async () => {
    const { stores } = await open();
    const { clientId } = await seedClient(stores);
    for (let i = 0; i < 3; i++) await stores.webhooks.insertOutboxRow({ clientId, recipientId: null, body: `{"n":${i}}`, nowMs: T0_MS });
    const due = await stores.webhooks.selectDueOutboxRows(T0_MS, 10);
    const [a, b, c] = due.map((d) => d.id) as [number, number, number];
    await stores.webhooks.recordAttempts([
      { id: a, kind: 'dead', attempts: 4, atMs: T0_MS + 10, lastError: 'HTTP_503', reason: 'transient', url: URL },
      { id: b, kind: 'dead', attempts: 4, atMs: T0_MS + 20, lastError: 'HTTP_503', reason: 'transient', url: URL },
      { id: c, kind: 'dead', attempts: 1, atMs: T0_MS + 30, lastError: 'HTTP_400', reason: 'permanent', url: URL },
    ]);
    expect((await stores.webhooks.listDeadLetters()).map((d) => [d.id, d.clientName, d.deadReason, d.deadAt, d.eventId])).toEqual([
      [a, 'acme', 'transient', T0_MS + 10, due[0]?.eventId], [b, 'acme', 'transient', T0_MS + 20, due[1]?.eventId], [c, 'acme', 'permanent', T0_MS + 30, due[2]?.eventId],
    ]);
    expect((await stores.webhooks.listDeadLetters({ clientId, sinceMs: T0_MS + 20, maxRows: 1 })).map((d) => d.id)).toEqual([b]);
    expect(await stores.webhooks.listRedriveEndpoints(T0_MS)).toEqual([{ clientId, url: URL }]);
    const filter = { clientId, url: URL, cutoffMs: T0_MS };
    expect(await stores.webhooks.requeueProbe(filter, T0_MS + 100)).toBe(a);
    expect(await stores.webhooks.redriveDeadLetters(filter, T0_MS + 100)).toBe(1);
    expect(await stores.webhooks.requeueProbe(filter, T0_MS + 100)).toBeNull();
    expect(await stores.webhooks.requeueDeadLetters({ clientId }, T0_MS + 200)).toEqual([c]);
    const again = await stores.webhooks.selectDueOutboxRows(T0_MS + 200, 10);
    expect(again.map((d) => [d.id, d.attempts, d.eventId])).toEqual(due.map((d) => [d.id, 0, d.eventId]));
    expect(await stores.webhooks.listDeadLetters()).toEqual([]);
  });
});
