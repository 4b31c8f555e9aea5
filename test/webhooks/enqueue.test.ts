import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/common/errors.js';
import { enqueueDeliveryReceipt, serializeDeliveryReceipt } from '../../src/webhooks/index.js';
import { openWebhookFixture, type WebhookFixture } from './fixture.js';

describe('enqueueDeliveryReceipt', () => {
  let fx: WebhookFixture;
  beforeEach(async () => {
    fx = await openWebhookFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('stores the exact body {To, From, Status, ClientReference} in that key order, pending and due now', () => {
    const clientId = fx.addClient('acme', { url: 'http://127.0.0.1:9/hook', secret: 'k' });
    const recipientId = fx.addRecipient(clientId, '353871234567', 'order-42');
    const queued = enqueueDeliveryReceipt(fx.store.db, {
      clientId, recipientId, to: '353871234567', from: 'Gate', status: 'DELIVRD', clientReference: 'order-42',
    }, 1_700_000_000_123);
    expect(queued).toBe(true);
    const [row] = fx.outbox();
    expect(row).toMatchObject({
      client_id: clientId, recipient_id: recipientId, state: 'pending', attempts: 0,
      next_attempt_at: 1_700_000_000_123, created_at: 1_700_000_000_123, last_error: null, delivered_at: null, dead_at: null,
    });
    expect(row?.body).toBe('{"To":"353871234567","From":"Gate","Status":"DELIVRD","ClientReference":"order-42"}');
    expect(Object.keys(JSON.parse(row?.body ?? '{}') as object)).toEqual(['To', 'From', 'Status', 'ClientReference']);
  });

  it('writes ClientReference as null when none was supplied, and keeps Status casing and non-ASCII text unchanged', () => {
    expect(serializeDeliveryReceipt({ to: '447700900123', from: 'Café', status: 'Undeliv', clientReference: null }))
      .toBe('{"To":"447700900123","From":"Café","Status":"Undeliv","ClientReference":null}');
    expect(serializeDeliveryReceipt({ to: '1', from: 'A"B', status: 'REJECTD', clientReference: 'quote"\\' }))
      .toBe('{"To":"1","From":"A\\"B","Status":"REJECTD","ClientReference":"quote\\"\\\\"}');
  });

  it('accepts a 30-character Status and ClientReference and refuses 31 with a coded error, never cutting', () => {
    const thirty = 'S'.repeat(30);
    expect(serializeDeliveryReceipt({ to: '1', from: 'A', status: thirty, clientReference: '€'.repeat(30) })).toContain(thirty);
    const tooLong = () => serializeDeliveryReceipt({ to: '1', from: 'A', status: 'S'.repeat(31), clientReference: null });
    expect(tooLong).toThrow();
    let thrown: unknown;
    try {
      tooLong();
    } catch (err) {
      thrown = err;
    }
    expect(isGatewayError(thrown, 'WEBHOOK_FIELD_INVALID')).toBe(true);
    expect(() => serializeDeliveryReceipt({ to: '1', from: 'A', status: 'X', clientReference: 'r'.repeat(31) })).toThrow(/ClientReference/);
    expect(() => serializeDeliveryReceipt({ to: '1', from: 'A', status: '', clientReference: null })).toThrow(/Status/);
  });

  it('queues nothing for a client without a webhook URL', () => {
    const clientId = fx.addClient('quiet', { url: null });
    const recipientId = fx.addRecipient(clientId, '353871234567');
    expect(enqueueDeliveryReceipt(fx.store.db, { clientId, recipientId, to: '353871234567', from: 'Gate', status: 'DELIVRD', clientReference: null }, 1))
      .toBe(false);
    expect(fx.outbox()).toEqual([]);
  });

  it('joins the caller transaction: a rollback removes the row with the status change', () => {
    const clientId = fx.addClient('acme', { url: 'http://127.0.0.1:9/hook' });
    const recipientId = fx.addRecipient(clientId, '353871234567');
    const db = fx.store.db;
    expect(() => db.transaction(() => {
      db.prepare(`UPDATE recipients SET status = 'delivered', last_status = 'DELIVRD' WHERE id = ?`).run(recipientId);
      enqueueDeliveryReceipt(db, { clientId, recipientId, to: '353871234567', from: 'Gate', status: 'DELIVRD', clientReference: null }, 1);
      throw new Error('engine failed after enqueue');
    })()).toThrow('engine failed');
    expect(fx.outbox()).toEqual([]);
    expect(db.prepare(`SELECT status FROM recipients WHERE id = ?`).pluck().get(recipientId)).toBe('pending');
  });
});
