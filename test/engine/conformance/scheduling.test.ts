/**
 * Engine conformance: what is sent when, on both backends. Nothing before the campaign's send
 * time; a recipient no route matches is finished as NO_ROUTE with its webhook and never sent;
 * claims are fair across campaigns (a small campaign is not queued behind a large backlog); the
 * in-flight window counts parts, not messages.
 */
import { expect, it } from 'vitest';
import { SimulatorTransport } from '../../../src/transports/simulator/index.js';
import { ManualClock } from '../../support/manual-clock.js';
import { ScriptedTransport } from '../scripted-transport.js';
import { allFinal, describeEngineConformance, msisdns, stepPolls, until, webhookStatuses } from './engine-backends.js';

function simulator(): SimulatorTransport {
  return new SimulatorTransport({ name: 'sim', type: 'simulator', maxPerSecond: 100_000, receiptDelayMs: 5, outcomes: [] }, { recordAccepted: true });
}

describeEngineConformance('engine scheduling', (open) => {
  it('does not send a campaign before its send time', async () => {
    const rig = await open();
    const sim = simulator();
    const clock = new ManualClock(0);
    const engine = await rig.startEngine({ transports: [sim], clock });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234567'], sendAtMs: Date.now() + 3_600_000 });
    // Ten scheduler passes before the send time.
    await stepPolls(clock, 10);
    expect(await rig.parts(campaignId)).toHaveLength(0);
    expect((await rig.recipients(campaignId))[0]?.dispatch_state).toBe('waiting');
    rig.clockSkewMs = 3_600_001;
    engine.wake();
    const [recipient] = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipient).toMatchObject({ status: 'delivered', dispatch_state: 'dispatched' });
    expect(sim.accepted).toHaveLength(1);
  });

  it('finishes a recipient no route matches as NO_ROUTE with its webhook, never sent, and the campaign is dispatched', async () => {
    const rig = await open();
    const sim = simulator();
    await rig.startEngine({ transports: [sim], routes: [{ prefix: '35387', transport: 'sim' }] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353870000001', '447700900123'] });
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.map((r) => [r.msisdn, r.status, r.last_status])).toEqual([
      ['353870000001', 'delivered', 'DELIVRD'],
      ['447700900123', 'undelivered', 'NO_ROUTE'],
    ]);
    expect((await rig.parts(campaignId)).map((p) => [p.transport, p.state, p.last_status, p.attempts])).toEqual([
      ['sim', 'delivered', 'DELIVRD', 1],
      [null, 'undelivered', 'NO_ROUTE', 0],
    ]);
    const statuses = webhookStatuses(await rig.outbox());
    expect(statuses.get(recipients[0]!.id)).toEqual(['DELIVRD']);
    expect(statuses.get(recipients[1]!.id)).toEqual(['NO_ROUTE']);
    expect(sim.accepted.map((a) => a.destination)).toEqual(['353870000001']);
    expect((await rig.campaign(campaignId))?.dispatched_at).not.toBeNull();
  });

  it('claims fairly across campaigns: a one-recipient campaign is among the first two submits, not behind 200 of another', async () => {
    const rig = await open();
    const transport = new ScriptedTransport('carrier', { windowSize: 4 });
    await rig.startEngine({ transports: [transport] });
    // Down while both campaigns are materialised, so one claim sees both backlogs.
    transport.setDown();
    const clientId = await rig.seedClient();
    const large = await rig.seedCampaign({ clientId, msisdns: msisdns(200) });
    await until(() => rig.parts(large), (parts) => parts.length === 200);
    const small = await rig.seedCampaign({ clientId, msisdns: msisdns(1, '35386') });
    await until(() => rig.parts(small), (parts) => parts.length === 1);
    expect((await rig.parts(large)).every((p) => p.state === 'queued')).toBe(true);
    transport.setUp();
    await until(async () => transport.held.length, (n) => n === 4);
    const first = transport.held.slice(0, 2).map((h) => h.message.destination);
    expect(first).toContain('353860000000');
    // Answering lets the rest through; every recipient of both campaigns is sent once.
    for (let answered = 1; answered <= 201; answered++) {
      await until(async () => transport.held.length, (n) => n > 0);
      const next = transport.held.shift()!;
      next.answer((next.message.partNumbers ?? [1]).map((part) => ({ part, kind: 'accepted', messageId: `m-${answered}-${part}` })));
    }
    await until(async () => [...await rig.parts(large), ...await rig.parts(small)], (parts) => parts.every((p) => p.state === 'submitted'));
  });

  it('counts the in-flight window in parts: with a window of 4, one 3-part message at a time, then 1-part ones fill it', async () => {
    const rig = await open();
    const transport = new ScriptedTransport();
    const clock = new ManualClock(0);
    await rig.startEngine({ transports: [transport], clock });
    const clientId = await rig.seedClient();
    const long = 'y'.repeat(153 * 2 + 10); // 3 GSM-7 parts
    await rig.seedCampaign({ clientId, text: long, msisdns: ['353870000001', '353870000002'] });
    await stepPolls(clock, 1);
    await until(async () => transport.held.length, (n) => n === 1);
    // A second 3-part message would make 6 parts in flight: it waits for the first to be answered,
    // however many polls pass.
    await stepPolls(clock, 5);
    expect(transport.held).toHaveLength(1);
    transport.held.shift()!.answer([1, 2, 3].map((part) => ({ part, kind: 'accepted', messageId: `long-1-${part}` })));
    await until(async () => transport.held.length, (n) => n === 1);
    expect(transport.held[0]?.message.destination).toBe('353870000002');
    transport.held.shift()!.answer([1, 2, 3].map((part) => ({ part, kind: 'accepted', messageId: `long-2-${part}` })));

    await rig.seedCampaign({ clientId, text: 'short', msisdns: Array.from({ length: 6 }, (_, i) => `35387100000${i}`) });
    await stepPolls(clock, 1);
    await until(async () => transport.held.length, (n) => n === transport.windowSize);
    await stepPolls(clock, 5);
    expect(transport.held).toHaveLength(transport.windowSize);
  });
});
