import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  countOutboxByState, listDeadLetters, recordAttempts, requeueDeadLetters, selectDueOutboxRows,
} from '../../src/store/sqlite/webhook-store.js';
import { enqueueDeliveryReceipt } from '../../src/webhooks/index.js';
import { openWebhookFixture, type WebhookFixture } from './fixture.js';

describe('webhook outbox store', () => {
  let fx: WebhookFixture;
  let clientId: number;
  const queue = (msisdn: string, nowMs: number) => {
    const recipientId = fx.addRecipient(clientId, msisdn);
    enqueueDeliveryReceipt(fx.store.db, { clientId, recipientId, to: msisdn, from: 'Gate', status: 'DELIVRD', clientReference: null }, nowMs);
    return Number(fx.store.db.prepare('SELECT MAX(id) FROM webhook_outbox').pluck().get());
  };
  beforeEach(async () => {
    fx = await openWebhookFixture();
    fx.store.db.pragma('synchronous = FULL');
    clientId = fx.addClient('acme', { url: 'http://127.0.0.1:9/hook', secret: 's' });
  });
  afterEach(async () => {
    await fx.close();
  });

  it('selects due pending rows oldest first with the client URL and sealed secret, never future or settled ones', () => {
    const a = queue('353870000001', 1_000);
    const b = queue('353870000002', 500);
    queue('353870000003', 5_000);
    const due = selectDueOutboxRows(fx.store.db, 1_000, 10);
    expect(due.map((r) => r.id)).toEqual([b, a]);
    expect(due[0]).toMatchObject({ clientId, attempts: 0, webhookUrl: 'http://127.0.0.1:9/hook' });
    expect(due[0]?.webhookSecretEnc).toMatch(/^v1\./);
    recordAttempts(fx.store.db, [{ id: b, kind: 'delivered', attempts: 1, atMs: 1_001 }]);
    expect(selectDueOutboxRows(fx.store.db, 1_000, 10).map((r) => r.id)).toEqual([a]);
  });

  it('writes delivered, retry and dead results, leaves the connection at synchronous FULL, and does not touch rows no longer pending', () => {
    const d = queue('353870000011', 0);
    const r = queue('353870000012', 0);
    const x = queue('353870000013', 0);
    recordAttempts(fx.store.db, [
      { id: d, kind: 'delivered', attempts: 2, atMs: 10 },
      { id: r, kind: 'retry', attempts: 1, nextAttemptAt: 2_010, lastError: 'HTTP_503' },
      { id: x, kind: 'dead', attempts: 4, atMs: 30, lastError: 'TIMEOUT', reason: 'transient', url: 'http://127.0.0.1:9/hook' },
    ]);
    expect(fx.store.db.pragma('synchronous', { simple: true })).toBe(2);
    expect(fx.row(d)).toMatchObject({ state: 'delivered', attempts: 2, delivered_at: 10 });
    expect(fx.row(r)).toMatchObject({ state: 'pending', attempts: 1, next_attempt_at: 2_010, last_error: 'HTTP_503' });
    expect(fx.row(x)).toMatchObject({ state: 'dead', attempts: 4, dead_at: 30, last_error: 'TIMEOUT' });
    // A late result for a row already delivered changes nothing.
    recordAttempts(fx.store.db, [{ id: d, kind: 'dead', attempts: 9, atMs: 99, lastError: 'LATE', reason: 'transient', url: null }]);
    expect(fx.row(d)).toMatchObject({ state: 'delivered', attempts: 2 });
    expect(countOutboxByState(fx.store.db)).toEqual({ pending: 1, delivered: 1, dead: 1 });
  });

  it('lists and re-queues dead letters by client and by the time they died', () => {
    const other = fx.addClient('other', { url: 'http://127.0.0.1:9/other' });
    const early = queue('353870000021', 0);
    const late = queue('353870000022', 0);
    const recipientId = fx.addRecipient(other, '353870000023');
    enqueueDeliveryReceipt(fx.store.db, { clientId: other, recipientId, to: '353870000023', from: 'Gate', status: 'UNDELIV', clientReference: null }, 0);
    const others = Number(fx.store.db.prepare('SELECT MAX(id) FROM webhook_outbox').pluck().get());
    recordAttempts(fx.store.db, [
      { id: early, kind: 'dead', attempts: 4, atMs: 100, lastError: 'HTTP_500', reason: 'transient', url: 'http://127.0.0.1:9/hook' },
      { id: late, kind: 'dead', attempts: 1, atMs: 200, lastError: 'HTTP_400', reason: 'permanent', url: 'http://127.0.0.1:9/hook' },
      { id: others, kind: 'dead', attempts: 4, atMs: 300, lastError: 'CIRCUIT_OPEN', reason: 'transient', url: 'http://127.0.0.1:9/other' },
    ]);
    expect(listDeadLetters(fx.store.db).map((r) => r.id)).toEqual([early, late, others]);
    expect(listDeadLetters(fx.store.db, { clientId }).map((r) => [r.id, r.clientName, r.lastError])).toEqual([[early, 'acme', 'HTTP_500'], [late, 'acme', 'HTTP_400']]);
    expect(requeueDeadLetters(fx.store.db, { clientId, sinceMs: 150 }, 1_000)).toEqual([late]);
    expect(fx.row(late)).toMatchObject({ state: 'pending', attempts: 0, next_attempt_at: 1_000, last_error: null, dead_at: null });
    expect(fx.row(early).state).toBe('dead');
    expect(fx.row(others).state).toBe('dead');
    expect(requeueDeadLetters(fx.store.db, { clientId }, 2_000)).toEqual([early]);
  });
});
