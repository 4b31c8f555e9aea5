import { afterEach, describe, expect, it } from 'vitest';
import { ENGINE_DEFAULTS } from '../../src/engine/config.js';
import { DispatchEngine } from '../../src/engine/dispatch-engine.js';
import { silentLogger } from '../../src/common/log.js';
import { SimulatorTransport } from '../../src/transports/simulator/index.js';
import { ManualClock } from '../support/manual-clock.js';
import { startEngineHarness, stepPolls, waitFor, type EngineHarness } from './engine-harness.js';
import { ScriptedTransport } from './scripted-transport.js';

/** The harness's engine.pollIntervalMs. */
const POLL_MS = 20;

let harness: EngineHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function simulator(overrides: Partial<ConstructorParameters<typeof SimulatorTransport>[0]> = {}): SimulatorTransport {
  return new SimulatorTransport({ name: 'sim', type: 'simulator', maxPerSecond: 100_000, receiptDelayMs: 5, outcomes: [], ...overrides }, { recordAccepted: true });
}

const allFinal = (rows: { status: string }[]): boolean => rows.every((r) => r.status !== 'pending');

describe('dispatch engine with the simulator', () => {
  it('delivers a one-part campaign and writes one webhook per recipient with the exact body', async () => {
    const sim = simulator();
    harness = await startEngineHarness({ transports: [sim] });
    const clientId = harness.seedClient();
    const campaignId = harness.seedCampaign({ clientId, sender: 'Acme', msisdns: ['353871234567', '447700900123'], clientReferences: ['ref-1', null] });
    const recipients = await waitFor(() => harness!.recipients(campaignId), allFinal);
    expect(recipients.map((r) => [r.status, r.last_status, r.dispatch_state])).toEqual([
      ['delivered', 'DELIVRD', 'dispatched'],
      ['delivered', 'DELIVRD', 'dispatched'],
    ]);
    const parts = harness.parts(campaignId);
    expect(parts.map((p) => [p.state, p.attempts, p.transport, p.parts_total])).toEqual([
      ['delivered', 1, 'sim', 1],
      ['delivered', 1, 'sim', 1],
    ]);
    expect(harness.outbox().map((o) => o.body)).toEqual([
      '{"To":"353871234567","From":"Acme","Status":"DELIVRD","ClientReference":"ref-1"}',
      '{"To":"447700900123","From":"Acme","Status":"DELIVRD","ClientReference":null}',
    ]);
    expect(harness.receipts().every((r) => r.match_state === 'matched')).toBe(true);
    expect(harness.webhookWakes).toBeGreaterThan(0);
  });

  it('sends a multi-part text as parts with one concatenation reference and delivers when every part is delivered', async () => {
    const sim = simulator();
    harness = await startEngineHarness({ transports: [sim] });
    const text = 'x'.repeat(153 * 2 + 10);
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), text, msisdns: ['353871234567'] });
    const [recipient] = await waitFor(() => harness!.recipients(campaignId), allFinal);
    expect(recipient?.status).toBe('delivered');
    const parts = harness.parts(campaignId);
    expect(parts.map((p) => p.part_number)).toEqual([1, 2, 3]);
    expect(new Set(parts.map((p) => p.concat_reference)).size).toBe(1);
    expect(sim.accepted.map((a) => a.text).join('')).toBe(text);
    expect(harness.outbox()).toHaveLength(1);
  });

  it('makes a multi-part recipient undelivered when one part is UNDELIV, with one webhook', async () => {
    const sim = simulator({ receiptDelayMs: 3_600_000 });
    harness = await startEngineHarness({ transports: [sim] });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), text: 'y'.repeat(200), msisdns: ['353871234567'] });
    await waitFor(() => harness!.parts(campaignId), (ps) => ps.length === 2 && ps.every((p) => p.state === 'submitted'));
    const [first, second] = sim.accepted;
    await sim.reportReceipt({ messageId: first!.messageId, status: 'DELIVRD' });
    expect(harness.recipients(campaignId)[0]?.status).toBe('pending');
    await sim.reportReceipt({ messageId: second!.messageId, status: 'UNDELIV' });
    expect(harness.recipients(campaignId)[0]).toMatchObject({ status: 'undelivered', last_status: 'UNDELIV' });
    expect(harness.parts(campaignId).map((p) => p.state)).toEqual(['delivered', 'undelivered']);
    expect(harness.outbox().map((o) => JSON.parse(o.body).Status)).toEqual(['UNDELIV']);
  });

  it('ignores duplicate and out-of-order receipts: a delivered recipient stays delivered', async () => {
    const sim = simulator({ receiptDelayMs: 3_600_000 });
    harness = await startEngineHarness({ transports: [sim] });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234567'] });
    await waitFor(() => harness!.parts(campaignId), (ps) => ps[0]?.state === 'submitted');
    const id = sim.accepted[0]!.messageId;
    await sim.reportReceipt({ messageId: id, status: 'DELIVRD' });
    await sim.reportReceipt({ messageId: id, status: 'DELIVRD' });
    await sim.reportReceipt({ messageId: id, status: 'UNDELIV' });
    await sim.reportReceipt({ messageId: id, status: 'ENROUTE', final: false });
    expect(harness.recipients(campaignId)[0]).toMatchObject({ status: 'delivered', last_status: 'DELIVRD' });
    expect(harness.parts(campaignId)[0]).toMatchObject({ state: 'delivered', last_status: 'DELIVRD' });
    expect(harness.outbox()).toHaveLength(1);
    expect(harness.receipts()).toHaveLength(4);
  });

  it('applies receipts committed in one batch in arrival order: ENROUTE then DELIVRD, a duplicate and a late UNDELIV', async () => {
    const sim = simulator({ receiptDelayMs: 3_600_000 });
    harness = await startEngineHarness({ transports: [sim] });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234567', '447700900123'] });
    await waitFor(() => harness!.parts(campaignId), (ps) => ps.length === 2 && ps.every((p) => p.state === 'submitted'));
    const [a, b] = sim.accepted.map((x) => x.messageId);
    // Not awaited one by one: all six join one group commit (the batch applies them with one lookup).
    await Promise.all([
      sim.reportReceipt({ messageId: a!, status: 'ENROUTE', final: false }),
      sim.reportReceipt({ messageId: b!, status: 'UNDELIV' }),
      sim.reportReceipt({ messageId: a!, status: 'DELIVRD' }),
      sim.reportReceipt({ messageId: a!, status: 'DELIVRD' }),
      sim.reportReceipt({ messageId: a!, status: 'UNDELIV' }),
      sim.reportReceipt({ messageId: 'no-such-id', status: 'DELIVRD' }),
    ]);
    expect(harness.recipients(campaignId).map((r) => [r.status, r.last_status])).toEqual([['delivered', 'DELIVRD'], ['undelivered', 'UNDELIV']]);
    expect(harness.parts(campaignId).map((p) => [p.state, p.last_status])).toEqual([['delivered', 'DELIVRD'], ['undelivered', 'UNDELIV']]);
    expect(harness.outbox().map((o) => JSON.parse(o.body) as { To: string; Status: string }).map((o) => [o.To, o.Status])).toEqual([
      ['353871234567', 'ENROUTE'],
      ['447700900123', 'UNDELIV'],
      ['353871234567', 'DELIVRD'],
    ]);
    expect(harness.receipts().map((r) => r.match_state)).toEqual(['matched', 'matched', 'matched', 'matched', 'matched', 'pending']);
  });

  it('reports an intermediate status as a webhook while the recipient stays pending', async () => {
    const sim = simulator({ receiptDelayMs: 3_600_000 });
    harness = await startEngineHarness({ transports: [sim] });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234567'] });
    await waitFor(() => harness!.parts(campaignId), (ps) => ps[0]?.state === 'submitted');
    const id = sim.accepted[0]!.messageId;
    await sim.reportReceipt({ messageId: id, status: 'ENROUTE', final: false });
    expect(harness.recipients(campaignId)[0]).toMatchObject({ status: 'pending', last_status: 'ENROUTE' });
    await sim.reportReceipt({ messageId: id, status: 'ENROUTE', final: false });
    await sim.reportReceipt({ messageId: id, status: 'DELIVRD' });
    expect(harness.recipients(campaignId)[0]).toMatchObject({ status: 'delivered', last_status: 'DELIVRD' });
    expect(harness.outbox().map((o) => JSON.parse(o.body).Status)).toEqual(['ENROUTE', 'DELIVRD']);
  });

  it('retries temporary failures with backoff up to maxAttempts, then the recipient is undelivered with the last status', async () => {
    const sim = simulator({ outcomes: [{ suffix: '7', status: 'ESME_RTHROTTLED', kind: 'temporary' }] });
    harness = await startEngineHarness({ transports: [sim], engine: { maxAttempts: 3, retryBaseDelayMs: 5 } });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234567'] });
    const [recipient] = await waitFor(() => harness!.recipients(campaignId), allFinal);
    expect(recipient).toMatchObject({ status: 'undelivered', last_status: 'ESME_RTHROTTLED' });
    expect(harness.parts(campaignId)[0]).toMatchObject({ state: 'undelivered', attempts: 3, last_status: 'ESME_RTHROTTLED' });
    expect(sim.accepted).toHaveLength(0);
    expect(harness.outbox().map((o) => JSON.parse(o.body).Status)).toEqual(['ESME_RTHROTTLED']);
  });

  it('delivers after a temporary failure when a retry succeeds', async () => {
    const sim = simulator({ outcomes: [{ suffix: '7', status: 'ESME_RTHROTTLED', kind: 'temporary', failures: 2 }] });
    harness = await startEngineHarness({ transports: [sim], engine: { maxAttempts: 5, retryBaseDelayMs: 5 } });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234567'] });
    const [recipient] = await waitFor(() => harness!.recipients(campaignId), allFinal);
    expect(recipient?.status).toBe('delivered');
    expect(harness.parts(campaignId)[0]).toMatchObject({ state: 'delivered', attempts: 3 });
  });

  it('fails a part permanently at submit with the transport status, after one attempt', async () => {
    const sim = simulator({ outcomes: [{ suffix: '8', status: 'REJECTD', kind: 'reject' }] });
    harness = await startEngineHarness({ transports: [sim] });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234568', '353871234567'] });
    const recipients = await waitFor(() => harness!.recipients(campaignId), allFinal);
    expect(recipients.map((r) => [r.msisdn, r.status, r.last_status])).toEqual([
      ['353871234568', 'undelivered', 'REJECTD'],
      ['353871234567', 'delivered', 'DELIVRD'],
    ]);
    expect(harness.parts(campaignId)[0]).toMatchObject({ state: 'undelivered', attempts: 1 });
  });

  it('holds parts while the transport is down, spending no attempts, and sends them when it comes back', async () => {
    const sim = simulator();
    const clock = new ManualClock(0);
    harness = await startEngineHarness({ transports: [sim], clock });
    sim.setDown('link lost');
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234567', '353871234568'] });
    await stepPolls(clock, 1, POLL_MS);
    await waitFor(() => harness!.parts(campaignId), (ps) => ps.length === 2);
    // Ten poll intervals pass with the link down: ten lane passes, no submit.
    await stepPolls(clock, 10, POLL_MS);
    expect(harness.parts(campaignId).map((p) => [p.state, p.attempts])).toEqual([
      ['queued', 0],
      ['queued', 0],
    ]);
    sim.setUp();
    const recipients = await waitFor(() => harness!.recipients(campaignId), allFinal);
    expect(recipients.map((r) => r.status)).toEqual(['delivered', 'delivered']);
  });

  it('marks recipients no route matches undelivered with NO_ROUTE and sends their webhook', async () => {
    const sim = simulator();
    harness = await startEngineHarness({ transports: [sim], routes: [{ prefix: '44', transport: 'sim' }] });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['447700900123', '353871234567'] });
    const recipients = await waitFor(() => harness!.recipients(campaignId), allFinal);
    expect(recipients.map((r) => [r.status, r.last_status])).toEqual([
      ['delivered', 'DELIVRD'],
      ['undelivered', 'NO_ROUTE'],
    ]);
    expect(harness.parts(campaignId)[1]).toMatchObject({ state: 'undelivered', transport: null, attempts: 0 });
    expect(harness.outbox().map((o) => JSON.parse(o.body).Status).sort()).toEqual(['DELIVRD', 'NO_ROUTE']);
  });

  it('writes no webhook outbox row for a client without a webhook URL', async () => {
    const sim = simulator();
    harness = await startEngineHarness({ transports: [sim] });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(null), msisdns: ['353871234567'] });
    await waitFor(() => harness!.recipients(campaignId), allFinal);
    expect(harness.outbox()).toHaveLength(0);
  });

  it('does not send a campaign before its send time', async () => {
    const sim = simulator();
    const clock = new ManualClock(0);
    harness = await startEngineHarness({ transports: [sim], clock });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234567'], sendAtMs: Date.now() + 3_600_000 });
    // Ten scheduler passes before the send time.
    await stepPolls(clock, 10, POLL_MS);
    expect(harness.parts(campaignId)).toHaveLength(0);
    expect(harness.recipients(campaignId)[0]?.dispatch_state).toBe('waiting');
    harness.clockSkewMs = 3_600_001;
    harness.engine.wake();
    await waitFor(() => harness!.recipients(campaignId), allFinal);
  });

  it('keeps an unmatched receipt pending, then expires it after the TTL', async () => {
    const sim = simulator();
    harness = await startEngineHarness({ transports: [sim], engine: { unmatchedReceiptTtlMs: 60_000 } });
    await sim.reportReceipt({ messageId: 'no-such-id', status: 'DELIVRD' });
    expect(harness.receipts()).toMatchObject([{ message_id: 'no-such-id', match_state: 'pending', part_id: null }]);
    expect(await harness.engine.expireUnmatchedReceipts()).toBe(0);
    harness.clockSkewMs = 60_001;
    expect(await harness.engine.expireUnmatchedReceipts()).toBe(1);
    expect(harness.receipts()[0]?.match_state).toBe('expired');
  });
});

describe('dispatch engine orderings', () => {
  it('matches a receipt that arrives before its submit response once the message id is written', async () => {
    const transport = new ScriptedTransport();
    harness = await startEngineHarness({ transports: [transport] });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234567'] });
    await waitFor(() => transport.held.length, (n) => n === 1);
    expect(harness.parts(campaignId)[0]?.state).toBe('submitting');
    await transport.handlers!.onReceipt({ messageId: 'abc123', status: 'DELIVRD', final: true, raw: 'id:abc123 stat:DELIVRD' });
    expect(harness.receipts()[0]).toMatchObject({ match_state: 'pending' });
    transport.held.shift()!.answer([{ part: 1, kind: 'accepted', messageId: 'abc123' }]);
    const [recipient] = await waitFor(() => harness!.recipients(campaignId), allFinal);
    expect(recipient).toMatchObject({ status: 'delivered', last_status: 'DELIVRD' });
    expect(harness.receipts()[0]).toMatchObject({ match_state: 'matched', part_id: harness.parts(campaignId)[0]?.id });
    expect(harness.outbox()).toHaveLength(1);
  });

  it('stores an inbound (mobile-originated) message in inbound_messages', async () => {
    const transport = new ScriptedTransport();
    harness = await startEngineHarness({ transports: [transport] });
    const beforeMs = Date.now();
    await transport.handlers!.onInbound({ from: '353871234567', to: '50123', text: 'STOP', receivedAt: '2026-11-21T10:00:00.000Z', raw: '0791...' });
    const afterMs = Date.now();
    const rows = harness.store.db.prepare('SELECT transport, sender, recipient, text, raw, received_at, client_id, incomplete FROM inbound_messages').all() as { received_at: number }[];
    expect(rows).toEqual([
      { transport: 'scripted', sender: '353871234567', recipient: '50123', text: 'STOP', raw: '0791...', received_at: expect.any(Number), client_id: null, incomplete: 0 },
    ]);
    // ReceivedAt is when smsgate stored it (the keyset of GET /v1/inbound), not the network's stamp.
    expect(rows[0]!.received_at).toBeGreaterThanOrEqual(beforeMs);
    expect(rows[0]!.received_at).toBeLessThanOrEqual(afterMs);
  });

  it('puts a not-sent part (TRANSPORT_DOWN or TRANSPORT_STOPPED) back without spending an attempt', async () => {
    const transport = new ScriptedTransport();
    harness = await startEngineHarness({ transports: [transport], engine: { maxAttempts: 1 } });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234567'] });
    await waitFor(() => transport.held.length, (n) => n === 1);
    transport.held.shift()!.answer([{ part: 1, kind: 'not-sent', reason: 'TRANSPORT_DOWN' }]);
    await waitFor(() => transport.held.length, (n) => n === 1);
    transport.held.shift()!.answer([{ part: 1, kind: 'not-sent', reason: 'TRANSPORT_STOPPED' }]);
    await waitFor(() => transport.held.length, (n) => n === 1);
    expect(harness.parts(campaignId)[0]).toMatchObject({ state: 'submitting', attempts: 0 });
    // With maxAttempts 1, one real temporary failure is final.
    transport.held.shift()!.answer([{ part: 1, kind: 'temporary', status: 'ESME_RMSGQFUL' }]);
    const [recipient] = await waitFor(() => harness!.recipients(campaignId), allFinal);
    expect(recipient).toMatchObject({ status: 'undelivered', last_status: 'ESME_RMSGQFUL' });
    expect(harness.parts(campaignId)[0]).toMatchObject({ state: 'undelivered', attempts: 1 });
  });

  it('on stop waits for in-flight submits, then puts unsent parts back to queued without spending attempts', async () => {
    const transport = new ScriptedTransport();
    harness = await startEngineHarness({ transports: [transport] });
    const msisdns = Array.from({ length: 10 }, (_, i) => `3538700000${String(i).padStart(2, '0')}`);
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns });
    await waitFor(() => transport.held.length, (n) => n === transport.windowSize);
    const first = transport.held.shift()!;
    first.answer([{ part: 1, kind: 'accepted', messageId: 'm-1' }]);
    await harness.engine.stop();
    const parts = harness.parts(campaignId);
    expect(parts.filter((p) => p.state === 'submitted')).toHaveLength(1);
    expect(parts.filter((p) => p.state === 'queued')).toHaveLength(9);
    expect(parts.every((p) => p.state === 'submitted' || p.attempts === 0)).toBe(true);
    expect(transport.stopCalls).toBe(1);
  });

  it('counts the in-flight window in parts: with a window of 4, one 3-part message at a time, then 1-part ones fill it', async () => {
    const transport = new ScriptedTransport();
    const clock = new ManualClock(0);
    harness = await startEngineHarness({ transports: [transport], clock });
    const clientId = harness.seedClient();
    const long = 'y'.repeat(153 * 2 + 10); // 3 GSM-7 parts
    harness.seedCampaign({ clientId, text: long, msisdns: ['353870000001', '353870000002'] });
    await stepPolls(clock, 1, POLL_MS);
    await waitFor(() => transport.held.length, (n) => n === 1);
    // A second 3-part message would make 6 parts in flight: it waits for the first to be answered,
    // however many polls pass.
    await stepPolls(clock, 5, POLL_MS);
    expect(transport.held).toHaveLength(1);
    const first = transport.held.shift()!;
    first.answer([1, 2, 3].map((part) => ({ part, kind: 'accepted', messageId: `long-1-${part}` })));
    await waitFor(() => transport.held.length, (n) => n === 1);
    expect(transport.held[0]?.message.destination).toBe('353870000002');
    transport.held.shift()!.answer([1, 2, 3].map((part) => ({ part, kind: 'accepted', messageId: `long-2-${part}` })));

    harness.seedCampaign({ clientId, text: 'short', msisdns: Array.from({ length: 6 }, (_, i) => `35387100000${i}`) });
    await stepPolls(clock, 1, POLL_MS);
    await waitFor(() => transport.held.length, (n) => n === transport.windowSize);
    await stepPolls(clock, 5, POLL_MS);
    expect(transport.held).toHaveLength(transport.windowSize);
  });

  it('after a crash re-sends parts left submitting and re-creates parts of recipients dispatched without any', async () => {
    const transport = new ScriptedTransport();
    harness = await startEngineHarness({ transports: [transport] });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234567', '353871234568'] });
    await waitFor(() => transport.held.length, (n) => n === 2);
    const db = harness.store.db;
    // What a kill -9 leaves: both parts 'submitting'; then one recipient loses its parts as if never written.
    const [, second] = harness.recipients(campaignId);
    db.prepare('DELETE FROM message_parts WHERE recipient_id = ?').run(second!.id);
    const sim = simulator();
    const restarted = new DispatchEngine({
      store: harness.store,
      transports: [sim],
      routes: [{ prefix: '', transport: 'sim' }],
      config: { ...ENGINE_DEFAULTS, pollIntervalMs: 20 },
      logger: silentLogger(),
      deliveryReceipts: { enqueue: () => false, wake: () => {} },
    });
    // The crashed engine's parts name transport 'scripted'; re-point them at the restarted one.
    db.prepare(`UPDATE message_parts SET transport = 'sim'`).run();
    await restarted.start();
    try {
      const recipients = await waitFor(() => harness!.recipients(campaignId), allFinal);
      expect(recipients.map((r) => r.status)).toEqual(['delivered', 'delivered']);
      expect(harness.parts(campaignId).map((p) => [p.state, p.attempts])).toEqual([
        ['delivered', 1],
        ['delivered', 1],
      ]);
    } finally {
      await restarted.stop();
    }
  });
  it('on start hands a simulator the ids of parts still waiting for a receipt, and their recipients become final', async () => {
    // Receipts an hour away and no drain: the stop leaves every part 'submitted', as a kill -9 would.
    const before = simulator({ receiptDelayMs: 3_600_000, outcomes: [{ suffix: '9', status: 'UNDELIV' }] });
    harness = await startEngineHarness({ transports: [before], engine: { drainTimeoutMs: 0 } });
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234560', '353871234569'] });
    // Both parts exist and are submitted (an empty list would pass `every` before the scheduler ran).
    await waitFor(() => harness!.parts(campaignId), (parts) => parts.length === 2 && parts.every((p) => p.state === 'submitted'));
    await harness.engine.stop();
    expect(harness.recipients(campaignId).map((r) => r.status)).toEqual(['pending', 'pending']);

    const after = simulator({ receiptDelayMs: 0, outcomes: [{ suffix: '9', status: 'UNDELIV' }] });
    const restarted = new DispatchEngine({
      store: harness.store,
      transports: [after],
      routes: [{ prefix: '', transport: 'sim' }],
      config: { ...ENGINE_DEFAULTS, pollIntervalMs: 20 },
      logger: silentLogger(),
      deliveryReceipts: { enqueue: () => false, wake: () => {} },
    });
    await restarted.start();
    try {
      const recipients = await waitFor(() => harness!.recipients(campaignId), allFinal);
      expect(recipients.map((r) => [r.status, r.last_status])).toEqual([
        ['delivered', 'DELIVRD'],
        ['undelivered', 'UNDELIV'],
      ]);
      // Re-issued, not re-sent: the restarted simulator accepted nothing.
      expect(after.accepted).toHaveLength(0);
    } finally {
      await restarted.stop();
    }
  });
});
