/**
 * Engine conformance: delivery on both backends, over the simulator and end to end over real SMPP
 * on loopback (TestSmsc): single- and multi-part messages, receipts applied (duplicates, out of
 * order, intermediate, arriving together), the engine's counters agreeing with the rows, and the
 * webhook outbox: one row per recipient status change when the client has a webhook URL, none
 * without.
 */
import { afterEach, expect, it } from 'vitest';
import { SimulatorTransport } from '../../../src/transports/simulator/index.js';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { TestSmsc } from '../../support/smsc/test-smsc.js';
import { smppConfig } from '../../transports/smpp/helpers.js';
import { allFinal, describeEngineConformance, msisdns, until, webhookStatuses } from './engine-backends.js';

/** 200 GSM-7 characters: two concatenated parts of 153. */
const TWO_PART_TEXT = 'A'.repeat(200);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function simulator(overrides: Partial<ConstructorParameters<typeof SimulatorTransport>[0]> = {}): SimulatorTransport {
  return new SimulatorTransport({ name: 'sim', type: 'simulator', maxPerSecond: 100_000, receiptDelayMs: 5, outcomes: [], ...overrides }, { recordAccepted: true });
}

const statuses = (outbox: readonly { body: string }[]): string[] => outbox.map((o) => (JSON.parse(o.body) as { Status: string }).Status);

describeEngineConformance('engine delivery', (open) => {
  it('delivers a one-part campaign and writes one webhook per recipient with the exact body', async () => {
    const rig = await open();
    await rig.startEngine({ transports: [simulator()] });
    const clientId = await rig.seedClient();
    const campaignId = await rig.seedCampaign({ clientId, sender: 'Acme', msisdns: ['353871234567', '447700900123'], clientReferences: ['ref-1', null] });
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.map((r) => [r.status, r.last_status, r.dispatch_state])).toEqual([
      ['delivered', 'DELIVRD', 'dispatched'],
      ['delivered', 'DELIVRD', 'dispatched'],
    ]);
    expect((await rig.parts(campaignId)).map((p) => [p.state, p.attempts, p.transport, p.parts_total])).toEqual([
      ['delivered', 1, 'sim', 1],
      ['delivered', 1, 'sim', 1],
    ]);
    // One row per recipient, keyed by recipient: the two receipts arrive apart and may commit in
    // either order (PostgreSQL runs up to four write transactions at once).
    expect(new Map((await rig.outbox()).map((o) => [o.recipient_id, o.body]))).toEqual(new Map([
      [recipients[0]!.id, '{"To":"353871234567","From":"Acme","Status":"DELIVRD","ClientReference":"ref-1"}'],
      [recipients[1]!.id, '{"To":"447700900123","From":"Acme","Status":"DELIVRD","ClientReference":null}'],
    ]));
    expect(await rig.outbox()).toHaveLength(2);
    expect((await rig.receipts()).map((r) => r.match_state)).toEqual(['matched', 'matched']);
    expect(rig.webhookWakes).toBeGreaterThan(0);
  });

  it('sends a multi-part text as parts with one concatenation reference and delivers when every part is delivered', async () => {
    const rig = await open();
    const sim = simulator();
    await rig.startEngine({ transports: [sim] });
    const text = 'x'.repeat(153 * 2 + 10);
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), text, msisdns: ['353871234567'] });
    const [recipient] = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipient?.status).toBe('delivered');
    const parts = await rig.parts(campaignId);
    expect(parts.map((p) => [p.part_number, p.parts_total, p.state])).toEqual([[1, 3, 'delivered'], [2, 3, 'delivered'], [3, 3, 'delivered']]);
    expect(new Set(parts.map((p) => p.concat_reference)).size).toBe(1);
    expect(sim.accepted.map((a) => a.text).join('')).toBe(text);
    expect(await rig.outbox()).toHaveLength(1);
  });

  it('makes a multi-part recipient undelivered when one part is UNDELIV, with one webhook', async () => {
    const rig = await open();
    const sim = simulator({ receiptDelayMs: 3_600_000 });
    await rig.startEngine({ transports: [sim] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), text: 'y'.repeat(200), msisdns: ['353871234567'] });
    await until(() => rig.parts(campaignId), (ps) => ps.length === 2 && ps.every((p) => p.state === 'submitted'));
    const [first, second] = sim.accepted;
    await sim.reportReceipt({ messageId: first!.messageId, status: 'DELIVRD' });
    expect((await rig.recipients(campaignId))[0]?.status).toBe('pending');
    await sim.reportReceipt({ messageId: second!.messageId, status: 'UNDELIV' });
    expect((await rig.recipients(campaignId))[0]).toMatchObject({ status: 'undelivered', last_status: 'UNDELIV' });
    expect((await rig.parts(campaignId)).map((p) => p.state)).toEqual(['delivered', 'undelivered']);
    expect(statuses(await rig.outbox())).toEqual(['UNDELIV']);
  });

  it('ignores duplicate and out-of-order receipts: a delivered recipient stays delivered', async () => {
    const rig = await open();
    const sim = simulator({ receiptDelayMs: 3_600_000 });
    await rig.startEngine({ transports: [sim] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234567'] });
    await until(() => rig.parts(campaignId), (ps) => ps[0]?.state === 'submitted');
    const id = sim.accepted[0]!.messageId;
    await sim.reportReceipt({ messageId: id, status: 'DELIVRD' });
    await sim.reportReceipt({ messageId: id, status: 'DELIVRD' });
    await sim.reportReceipt({ messageId: id, status: 'UNDELIV' });
    await sim.reportReceipt({ messageId: id, status: 'ENROUTE', final: false });
    expect((await rig.recipients(campaignId))[0]).toMatchObject({ status: 'delivered', last_status: 'DELIVRD' });
    expect((await rig.parts(campaignId))[0]).toMatchObject({ state: 'delivered', last_status: 'DELIVRD' });
    expect(await rig.outbox()).toHaveLength(1);
    expect(await rig.receipts()).toHaveLength(4);
  });

  it('applies receipts arriving together in arrival order: ENROUTE then DELIVRD, a duplicate and a late UNDELIV', async () => {
    const rig = await open();
    const sim = simulator({ receiptDelayMs: 3_600_000 });
    await rig.startEngine({ transports: [sim] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234567', '447700900123'] });
    await until(() => rig.parts(campaignId), (ps) => ps.length === 2 && ps.every((p) => p.state === 'submitted'));
    const [a, b] = sim.accepted.map((x) => x.messageId);
    // Not awaited one by one: all six arrive before the first is committed (SQLite: one group commit).
    await Promise.all([
      sim.reportReceipt({ messageId: a!, status: 'ENROUTE', final: false }),
      sim.reportReceipt({ messageId: b!, status: 'UNDELIV' }),
      sim.reportReceipt({ messageId: a!, status: 'DELIVRD' }),
      sim.reportReceipt({ messageId: a!, status: 'DELIVRD' }),
      sim.reportReceipt({ messageId: a!, status: 'UNDELIV' }),
      sim.reportReceipt({ messageId: 'no-such-id', status: 'DELIVRD' }),
    ]);
    expect((await rig.recipients(campaignId)).map((r) => [r.status, r.last_status])).toEqual([['delivered', 'DELIVRD'], ['undelivered', 'UNDELIV']]);
    expect((await rig.parts(campaignId)).map((p) => [p.state, p.last_status])).toEqual([['delivered', 'DELIVRD'], ['undelivered', 'UNDELIV']]);
    // Each recipient's webhooks in the order of its receipts (across recipients, commits may interleave).
    const recipients = await rig.recipients(campaignId);
    expect(webhookStatuses(await rig.outbox())).toEqual(new Map([[recipients[0]!.id, ['ENROUTE', 'DELIVRD']], [recipients[1]!.id, ['UNDELIV']]]));
    const receipts = await rig.receipts();
    expect(receipts).toHaveLength(6);
    expect(receipts.map((r) => [r.message_id === 'no-such-id', r.match_state]).sort()).toEqual([
      [false, 'matched'], [false, 'matched'], [false, 'matched'], [false, 'matched'], [false, 'matched'], [true, 'pending'],
    ]);
  });

  it('reports an intermediate status as a webhook while the recipient stays pending', async () => {
    const rig = await open();
    const sim = simulator({ receiptDelayMs: 3_600_000 });
    await rig.startEngine({ transports: [sim] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234567'] });
    await until(() => rig.parts(campaignId), (ps) => ps[0]?.state === 'submitted');
    const id = sim.accepted[0]!.messageId;
    await sim.reportReceipt({ messageId: id, status: 'ENROUTE', final: false });
    expect((await rig.recipients(campaignId))[0]).toMatchObject({ status: 'pending', last_status: 'ENROUTE' });
    await sim.reportReceipt({ messageId: id, status: 'ENROUTE', final: false });
    await sim.reportReceipt({ messageId: id, status: 'DELIVRD' });
    expect((await rig.recipients(campaignId))[0]).toMatchObject({ status: 'delivered', last_status: 'DELIVRD' });
    expect(statuses(await rig.outbox())).toEqual(['ENROUTE', 'DELIVRD']);
  });

  it('writes no webhook outbox row for a client without a webhook URL', async () => {
    const rig = await open();
    await rig.startEngine({ transports: [simulator()] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(null), msisdns: ['353871234567', '353871234568'] });
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.map((r) => r.status)).toEqual(['delivered', 'delivered']);
    expect(await rig.outbox()).toHaveLength(0);
  });

  it('over SMPP sends single- and multi-part messages of two campaigns once each and applies every receipt, one webhook row per recipient', async () => {
    const rig = await open();
    const smsc = await TestSmsc.start({ autoReceipt: { stat: 'DELIVRD' } });
    cleanups.push(() => smsc.stop());
    const engine = await rig.startEngine({ transports: [new SmppTransport(smppConfig(smsc))] });
    const clientId = await rig.seedClient();
    const short = await rig.seedCampaign({ clientId, msisdns: msisdns(3) });
    const long = await rig.seedCampaign({ clientId, text: TWO_PART_TEXT, msisdns: msisdns(2, '35386') });

    const shortRecipients = await until(() => rig.recipients(short), allFinal);
    const longRecipients = await until(() => rig.recipients(long), allFinal);
    expect([...shortRecipients, ...longRecipients].map((r) => [r.status, r.last_status])).toEqual(Array(5).fill(['delivered', 'DELIVRD']));
    const parts = [...await rig.parts(short), ...await rig.parts(long)];
    expect(parts.map((p) => [p.part_number, p.parts_total, p.state, p.attempts])).toEqual([
      ...Array(3).fill([1, 1, 'delivered', 1]),
      [1, 2, 'delivered', 1], [2, 2, 'delivered', 1],
      [1, 2, 'delivered', 1], [2, 2, 'delivered', 1],
    ]);
    if (rig.hasNodes) expect(parts.map((p) => p.claimed_by)).toEqual(Array(7).fill(null));
    expect(smsc.submits).toHaveLength(7);
    expect((await rig.receipts()).map((r) => r.match_state)).toEqual(Array(7).fill('matched'));
    expect([...webhookStatuses(await rig.outbox()).values()]).toEqual(Array(5).fill(['DELIVRD']));
    expect(engine.stats()).toMatchObject({ recipientsDispatched: 5, submits: 5, outcomes: { accepted: 7, retried: 0, failed: 0 }, fencedWrites: 0, failedCommits: 0 });
    // Matched on arrival, or kept unmatched a moment and taken by the submit write of their part.
    expect(engine.stats().receiptsMatched + engine.stats().receiptsParked).toBe(7);
  });
});
