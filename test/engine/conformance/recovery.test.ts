/**
 * Engine conformance: stop, kill and restart on both backends. A clean stop drains the submits in
 * flight and puts every part not answered back to 'queued' without spending an attempt. An engine
 * killed mid-submit (here: frozen for good on a clock that never moves, its submits never
 * answered, never stopped before the next one starts) leaves parts 'submitting': the next start
 * requeues them and sends them again, and reopens recipients marked dispatched without parts. A
 * restart hands the transport the message ids still waiting for a receipt.
 */
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../../src/common/log.js';
import { SimulatorTransport } from '../../../src/transports/simulator/index.js';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { ManualClock } from '../../support/manual-clock.js';
import { TestSmsc } from '../../support/smsc/test-smsc.js';
import { smppConfig } from '../../transports/smpp/helpers.js';
import { ScriptedTransport } from '../scripted-transport.js';
import { allFinal, describeEngineConformance, msisdns, until } from './engine-backends.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function simulator(overrides: Partial<ConstructorParameters<typeof SimulatorTransport>[0]> = {}): SimulatorTransport {
  return new SimulatorTransport({ name: 'sim', type: 'simulator', maxPerSecond: 100_000, receiptDelayMs: 5, outcomes: [], ...overrides }, { recordAccepted: true });
}

describeEngineConformance('engine stop, kill and restart', (open) => {
  it('on stop waits for in-flight submits, then puts unsent parts back to queued without spending attempts', async () => {
    const rig = await open();
    const transport = new ScriptedTransport();
    const engine = await rig.startEngine({ transports: [transport] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(10) });
    await until(async () => transport.held.length, (n) => n === transport.windowSize);
    transport.held.shift()!.answer([{ part: 1, kind: 'accepted', messageId: 'm-1' }]);
    await engine.stop();
    const parts = await rig.parts(campaignId);
    expect(parts.map((p) => p.state).sort()).toEqual([...Array(9).fill('queued'), 'submitted']);
    expect(parts.filter((p) => p.state === 'queued').map((p) => p.attempts)).toEqual(Array(9).fill(0));
    expect(parts.find((p) => p.state === 'submitted')).toMatchObject({ message_id: 'm-1', attempts: 1 });
    if (rig.hasNodes) expect(parts.map((p) => p.claimed_by)).toEqual(Array(10).fill(null));
    expect(transport.stopCalls).toBe(1);
  });

  it('on stop with submits never answered and no drain time, puts every part back to queued without spending an attempt', async () => {
    const rig = await open();
    const smsc = await TestSmsc.start({ onSubmit: () => ({ kind: 'never' }) });
    cleanups.push(() => smsc.stop());
    const engine = await rig.startEngine({ transports: [new SmppTransport(smppConfig(smsc, { responseTimeoutMs: 60_000 }))], engine: { drainTimeoutMs: 0 } });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(3) });
    await until(async () => smsc.submits.length, (n) => n === 3);
    expect((await rig.parts(campaignId)).map((p) => p.state)).toEqual(Array(3).fill('submitting'));
    await engine.stop();
    expect((await rig.parts(campaignId)).map((p) => [p.state, p.attempts])).toEqual(Array(3).fill(['queued', 0]));
    if (rig.hasNodes) expect((await rig.parts(campaignId)).map((p) => p.claimed_by)).toEqual(Array(3).fill(null));
  });

  it('after a kill re-sends parts left submitting and re-creates parts of recipients dispatched without any', async () => {
    const rig = await open();
    // The engine that is killed: its loops sleep on a clock that never moves again and its
    // transport never answers, so after the pass the wake below starts it does nothing more, as if gone.
    const killed = new ScriptedTransport('carrier');
    const killedClock = new ManualClock(0);
    await rig.startEngine({ transports: [killed], clock: killedClock });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234567', '353871234568'], wake: false });
    // What an older version could leave: the second recipient marked dispatched with no part written.
    const [, orphan] = await rig.recipients(campaignId);
    await rig.stores.dispatch.markRecipientDispatched(orphan!.id, Date.now());
    rig.engine.wake();
    await until(async () => killed.held.length, (n) => n === 1);
    // Its loops asleep again (the lane's pass after the claim found nothing): none of them moves any more.
    await until(async () => killedClock.pendingTimers(), (n) => n >= 3);
    expect((await rig.parts(campaignId)).map((p) => [p.recipient_id, p.state, p.attempts])).toEqual([[(await rig.recipients(campaignId))[0]!.id, 'submitting', 0]]);
    expect((await rig.recipients(campaignId)).map((r) => r.dispatch_state)).toEqual(['dispatched', 'dispatched']);

    const lines: { msg: string; requeued?: number; reopened?: number }[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as { msg: string });
        callback();
      },
    });
    const sim = simulator({ name: 'carrier' });
    await rig.startEngine({ transports: [sim], logger: createLogger({ level: 'info', destination }) });
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.map((r) => [r.status, r.dispatch_state])).toEqual([['delivered', 'dispatched'], ['delivered', 'dispatched']]);
    expect((await rig.parts(campaignId)).map((p) => [p.state, p.attempts])).toEqual([['delivered', 1], ['delivered', 1]]);
    expect(sim.accepted.map((a) => a.destination).sort()).toEqual(['353871234567', '353871234568']);
    expect(lines.filter((l) => l.msg.startsWith('recovered work left by an unclean stop'))).toMatchObject([{ requeued: 1, reopened: 1 }]);
    expect(killed.held).toHaveLength(1);
  });

  it('on start hands a simulator the ids of parts still waiting for a receipt, and their recipients become final', async () => {
    const rig = await open();
    // Receipts an hour away and no drain: the stop leaves every part 'submitted'.
    const before = simulator({ receiptDelayMs: 3_600_000, outcomes: [{ suffix: '9', status: 'UNDELIV' }] });
    const first = await rig.startEngine({ transports: [before], engine: { drainTimeoutMs: 0 } });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234560', '353871234569'] });
    await until(() => rig.parts(campaignId), (parts) => parts.length === 2 && parts.every((p) => p.state === 'submitted'));
    await first.stop();
    expect((await rig.recipients(campaignId)).map((r) => r.status)).toEqual(['pending', 'pending']);

    const after = simulator({ receiptDelayMs: 0, outcomes: [{ suffix: '9', status: 'UNDELIV' }] });
    await rig.startEngine({ transports: [after] });
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.map((r) => [r.status, r.last_status])).toEqual([
      ['delivered', 'DELIVRD'],
      ['undelivered', 'UNDELIV'],
    ]);
    // Re-issued, not re-sent: the restarted simulator accepted nothing.
    expect(after.accepted).toHaveLength(0);
  });
});
