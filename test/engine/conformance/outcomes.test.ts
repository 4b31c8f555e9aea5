/**
 * Engine conformance: submit outcomes on both backends. A temporary failure is retried with
 * backoff until engine.maxAttempts, then the recipient is undelivered with the last status; a
 * permanent one is final after one attempt; a part not sent (transport down or stopping) goes
 * back without spending an attempt; a transport that is down holds its parts. The engine alone
 * counts attempts, over the simulator, real SMPP on loopback (TestSmsc) and a modem emulator on a
 * socat pty; a transport whose submit keeps rejecting is logged once, not per message.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../../src/common/log.js';
import { ModemTransport } from '../../../src/transports/modem/index.js';
import { SimulatorTransport } from '../../../src/transports/simulator/index.js';
import { COMMAND_STATUS_CODE } from '../../../src/transports/smpp/command-status.js';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import type { OutboundMessage, PartOutcome } from '../../../src/transports/transport.js';
import { ManualClock } from '../../support/manual-clock.js';
import { ModemEmulator } from '../../support/modem-emulator/index.js';
import { TestSmsc } from '../../support/smsc/test-smsc.js';
import { smppConfig } from '../../transports/smpp/helpers.js';
import { ScriptedTransport } from '../scripted-transport.js';
import { allFinal, describeEngineConformance, stepPolls, until, type EngineRig } from './engine-backends.js';

function simulator(overrides: Partial<ConstructorParameters<typeof SimulatorTransport>[0]> = {}): SimulatorTransport {
  return new SimulatorTransport({ name: 'sim', type: 'simulator', maxPerSecond: 100_000, receiptDelayMs: 5, outcomes: [], ...overrides }, { recordAccepted: true });
}

const statuses = (outbox: readonly { body: string }[]): string[] => outbox.map((o) => (JSON.parse(o.body) as { Status: string }).Status);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Starts an SMSC stopped after the test (after the engine, which stops its transport first). */
async function smscRefusingEverySubmit(commandStatus: number): Promise<{ smsc: TestSmsc; submitTimesMs: number[] }> {
  const submitTimesMs: number[] = [];
  const smsc = await TestSmsc.start({
    onSubmit: () => {
      submitTimesMs.push(Date.now());
      return { kind: 'status', commandStatus };
    },
  });
  cleanups.push(() => smsc.stop());
  return { smsc, submitTimesMs };
}

/** Rejects submit (a broken transport) while `rejecting`, else accepts every part. */
class RejectingTransport extends ScriptedTransport {
  rejecting = true;
  rejections = 0;
  private nextId = 1;

  override submit(message: OutboundMessage): Promise<PartOutcome[]> {
    if (this.rejecting) {
      this.rejections++;
      return Promise.reject(new Error('transport bug'));
    }
    const parts = message.partNumbers ?? message.segments.map((_, i) => i + 1);
    return Promise.resolve(parts.map((part) => ({ part, kind: 'accepted', messageId: `m${this.nextId++}` })));
  }
}

function capturedLogger(): { logger: ReturnType<typeof createLogger>; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as { level: number; msg: string });
      callback();
    },
  });
  return { logger: createLogger({ level: 'info', destination }), lines };
}

async function oneRecipientFinal(rig: EngineRig): Promise<string> {
  const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234567'] });
  await until(() => rig.recipients(campaignId), allFinal);
  return campaignId;
}

describeEngineConformance('engine submit outcomes', (open) => {
  it('retries temporary failures with backoff up to maxAttempts, then the recipient is undelivered with the last status', async () => {
    const rig = await open();
    const sim = simulator({ outcomes: [{ suffix: '7', status: 'ESME_RTHROTTLED', kind: 'temporary' }] });
    await rig.startEngine({ transports: [sim], engine: { maxAttempts: 3, retryBaseDelayMs: 5 } });
    const campaignId = await oneRecipientFinal(rig);
    expect((await rig.recipients(campaignId))[0]).toMatchObject({ status: 'undelivered', last_status: 'ESME_RTHROTTLED' });
    expect((await rig.parts(campaignId))[0]).toMatchObject({ state: 'undelivered', attempts: 3, last_status: 'ESME_RTHROTTLED' });
    expect(sim.accepted).toHaveLength(0);
    expect(statuses(await rig.outbox())).toEqual(['ESME_RTHROTTLED']);
    expect(rig.engine.stats().outcomes).toMatchObject({ accepted: 0, retried: 2, failed: 1 });
  });

  it('delivers after a temporary failure when a retry succeeds', async () => {
    const rig = await open();
    const sim = simulator({ outcomes: [{ suffix: '7', status: 'ESME_RTHROTTLED', kind: 'temporary', failures: 2 }] });
    await rig.startEngine({ transports: [sim], engine: { maxAttempts: 5, retryBaseDelayMs: 5 } });
    const campaignId = await oneRecipientFinal(rig);
    expect((await rig.recipients(campaignId))[0]?.status).toBe('delivered');
    expect((await rig.parts(campaignId))[0]).toMatchObject({ state: 'delivered', attempts: 3 });
    expect(statuses(await rig.outbox())).toEqual(['DELIVRD']);
  });

  it('fails a part permanently at submit with the transport status, after one attempt', async () => {
    const rig = await open();
    await rig.startEngine({ transports: [simulator({ outcomes: [{ suffix: '8', status: 'REJECTD', kind: 'reject' }] })] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234568', '353871234567'] });
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.map((r) => [r.msisdn, r.status, r.last_status])).toEqual([
      ['353871234568', 'undelivered', 'REJECTD'],
      ['353871234567', 'delivered', 'DELIVRD'],
    ]);
    expect((await rig.parts(campaignId))[0]).toMatchObject({ state: 'undelivered', attempts: 1, last_status: 'REJECTD' });
    expect(statuses(await rig.outbox()).sort()).toEqual(['DELIVRD', 'REJECTD']);
  });

  it('puts a not-sent part (TRANSPORT_DOWN or TRANSPORT_STOPPED) back without spending an attempt', async () => {
    const rig = await open();
    const transport = new ScriptedTransport();
    await rig.startEngine({ transports: [transport], engine: { maxAttempts: 1 } });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234567'] });
    await until(async () => transport.held.length, (n) => n === 1);
    transport.held.shift()!.answer([{ part: 1, kind: 'not-sent', reason: 'TRANSPORT_DOWN' }]);
    await until(async () => transport.held.length, (n) => n === 1);
    transport.held.shift()!.answer([{ part: 1, kind: 'not-sent', reason: 'TRANSPORT_STOPPED' }]);
    await until(async () => transport.held.length, (n) => n === 1);
    expect((await rig.parts(campaignId))[0]).toMatchObject({ state: 'submitting', attempts: 0 });
    expect(rig.engine.stats().outcomes).toMatchObject({ held: 2, retried: 0, failed: 0 });
    // With maxAttempts 1, one real temporary failure is final.
    transport.held.shift()!.answer([{ part: 1, kind: 'temporary', status: 'ESME_RMSGQFUL' }]);
    const [recipient] = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipient).toMatchObject({ status: 'undelivered', last_status: 'ESME_RMSGQFUL' });
    expect((await rig.parts(campaignId))[0]).toMatchObject({ state: 'undelivered', attempts: 1 });
  });

  it('keeps the transport\'s status and error code on a part through a retry, due after the backoff, and its submit time once accepted', async () => {
    const rig = await open();
    const transport = new ScriptedTransport();
    // A minute's backoff: the part is seen queued for certain, then the clock is moved past it.
    await rig.startEngine({ transports: [transport], engine: { retryBaseDelayMs: 60_000, retryMaxDelayMs: 60_000 } });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234567'] });
    await until(async () => transport.held.length, (n) => n === 1);
    const failedAt = Date.now();
    transport.held.shift()!.answer([{ part: 1, kind: 'temporary', status: 'ESME_RTHROTTLED', errorCode: 88 }]);
    const [queued] = await until(() => rig.parts(campaignId), (ps) => ps[0]?.state === 'queued');
    expect(queued).toMatchObject({ attempts: 1, last_status: 'ESME_RTHROTTLED', last_error_code: '88', message_id: null, submitted_at: null, final_at: null });
    expect(queued!.next_attempt_at).toBeGreaterThanOrEqual(failedAt + 60_000);
    expect(queued!.next_attempt_at).toBeLessThanOrEqual(Date.now() + 60_000);
    rig.clockSkewMs = 60_001;
    await until(async () => transport.held.length, (n) => n === 1);
    const acceptedAt = Date.now() + rig.clockSkewMs;
    transport.held.shift()!.answer([{ part: 1, kind: 'accepted', messageId: 'm-1' }]);
    const [submitted] = await until(() => rig.parts(campaignId), (ps) => ps[0]?.state === 'submitted');
    expect(submitted).toMatchObject({ attempts: 2, message_id: 'm-1', final_at: null });
    expect(submitted!.submitted_at).toBeGreaterThanOrEqual(acceptedAt);
    expect(await rig.recipients(campaignId)).toMatchObject([{ status: 'pending' }]);
    expect(await rig.outbox()).toEqual([]);
  });

  it('retries only the part of a two-part message that failed for a passing reason, then delivers the recipient', async () => {
    const rig = await open();
    const transport = new ScriptedTransport();
    await rig.startEngine({ transports: [transport] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), text: 'z'.repeat(200), msisdns: ['353871234567'] });
    await until(async () => transport.held.length, (n) => n === 1);
    expect(transport.held[0]!.message.segments).toHaveLength(2);
    transport.held.shift()!.answer([{ part: 1, kind: 'accepted', messageId: 'p-1' }, { part: 2, kind: 'temporary', status: 'ESME_RTHROTTLED' }]);
    await until(async () => transport.held.length, (n) => n === 1);
    // The retry carries part 2 alone, in the same concatenation.
    expect(transport.held[0]!.message.partNumbers).toEqual([2]);
    expect((await rig.parts(campaignId)).map((p) => [p.part_number, p.state, p.attempts, p.message_id])).toEqual([[1, 'submitted', 1, 'p-1'], [2, 'submitting', 1, null]]);
    transport.held.shift()!.answer([{ part: 2, kind: 'accepted', messageId: 'p-2' }]);
    await until(() => rig.parts(campaignId), (ps) => ps[1]?.state === 'submitted');
    await transport.handlers!.onReceipt({ messageId: 'p-1', status: 'DELIVRD', final: true, raw: 'id:p-1 stat:DELIVRD' });
    await transport.handlers!.onReceipt({ messageId: 'p-2', status: 'DELIVRD', final: true, raw: 'id:p-2 stat:DELIVRD' });
    expect(await rig.recipients(campaignId)).toMatchObject([{ status: 'delivered', last_status: 'DELIVRD' }]);
    expect((await rig.parts(campaignId)).map((p) => [p.state, p.attempts])).toEqual([['delivered', 1], ['delivered', 2]]);
    expect(statuses(await rig.outbox())).toEqual(['DELIVRD']);
    expect(rig.engine.stats().outcomes).toMatchObject({ accepted: 2, retried: 1, failed: 0 });
  });

  it('makes a two-part recipient undelivered when one part is refused for good, with one webhook, while the other part was accepted', async () => {
    const rig = await open();
    const transport = new ScriptedTransport();
    await rig.startEngine({ transports: [transport] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), text: 'z'.repeat(200), msisdns: ['353871234567'] });
    await until(async () => transport.held.length, (n) => n === 1);
    transport.held.shift()!.answer([{ part: 1, kind: 'accepted', messageId: 'p-1' }, { part: 2, kind: 'permanent', status: 'ESME_RINVDSTADR' }]);
    const [recipient] = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipient).toMatchObject({ status: 'undelivered', last_status: 'ESME_RINVDSTADR' });
    expect((await rig.parts(campaignId)).map((p) => [p.part_number, p.state, p.attempts, p.last_status])).toEqual([
      [1, 'submitted', 1, null],
      [2, 'undelivered', 1, 'ESME_RINVDSTADR'],
    ]);
    expect(statuses(await rig.outbox())).toEqual(['ESME_RINVDSTADR']);
    // The accepted part's receipt comes later and changes nothing the recipient shows.
    await transport.handlers!.onReceipt({ messageId: 'p-1', status: 'DELIVRD', final: true, raw: 'id:p-1 stat:DELIVRD' });
    expect(await rig.recipients(campaignId)).toMatchObject([{ status: 'undelivered', last_status: 'ESME_RINVDSTADR' }]);
    expect((await rig.parts(campaignId)).map((p) => p.state)).toEqual(['delivered', 'undelivered']);
    expect(statuses(await rig.outbox())).toEqual(['ESME_RINVDSTADR']);
  });

  it('holds parts while the transport is down, spending no attempts, and sends them when it comes back', async () => {
    const rig = await open();
    const sim = simulator();
    const clock = new ManualClock(0);
    await rig.startEngine({ transports: [sim], clock });
    sim.setDown('link lost');
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234567', '353871234568'] });
    await stepPolls(clock, 1);
    await until(() => rig.parts(campaignId), (ps) => ps.length === 2);
    // Ten poll intervals pass with the link down: ten lane passes, no submit.
    await stepPolls(clock, 10);
    expect((await rig.parts(campaignId)).map((p) => [p.state, p.attempts])).toEqual([['queued', 0], ['queued', 0]]);
    expect(sim.accepted).toHaveLength(0);
    sim.setUp();
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.map((r) => r.status)).toEqual(['delivered', 'delivered']);
    expect((await rig.parts(campaignId)).map((p) => p.attempts)).toEqual([1, 1]);
  });

  it('sends a part the SMSC refuses with ESME_RSYSERR (temporary) exactly engine.maxAttempts (4) times', async () => {
    const rig = await open();
    const { smsc, submitTimesMs } = await smscRefusingEverySubmit(COMMAND_STATUS_CODE.ESME_RSYSERR);
    await rig.startEngine({ transports: [new SmppTransport(smppConfig(smsc))], engine: { maxAttempts: 4 } });
    const campaignId = await oneRecipientFinal(rig);
    expect(submitTimesMs).toHaveLength(4);
    expect((await rig.recipients(campaignId))[0]).toMatchObject({ status: 'undelivered', last_status: 'ESME_RSYSERR' });
    expect((await rig.parts(campaignId))[0]).toMatchObject({ state: 'undelivered', attempts: 4 });
  });

  it('retries an ESME_RTHROTTLED part no sooner than its retryAfterMs (1 s), maxAttempts (2) times in all', async () => {
    const rig = await open();
    const { smsc, submitTimesMs } = await smscRefusingEverySubmit(COMMAND_STATUS_CODE.ESME_RTHROTTLED);
    // The harness's backoff is 10 ms doubling to 100 ms: far below the throttle pause.
    await rig.startEngine({ transports: [new SmppTransport(smppConfig(smsc))], engine: { maxAttempts: 2 } });
    const campaignId = await oneRecipientFinal(rig);
    expect(submitTimesMs).toHaveLength(2);
    expect(submitTimesMs[1]! - submitTimesMs[0]!).toBeGreaterThanOrEqual(1_000);
    expect((await rig.parts(campaignId))[0]).toMatchObject({ state: 'undelivered', attempts: 2, last_status: 'ESME_RTHROTTLED' });
  });

  it('retries a part the SMSC refuses once with ESME_RSYSERR and delivers it on the second attempt', async () => {
    const rig = await open();
    let refused = 0;
    const smsc = await TestSmsc.start({
      autoReceipt: { stat: 'DELIVRD' },
      onSubmit: () => (refused++ === 0 ? { kind: 'status', commandStatus: COMMAND_STATUS_CODE.ESME_RSYSERR } : { kind: 'ok' }),
    });
    cleanups.push(() => smsc.stop());
    await rig.startEngine({ transports: [new SmppTransport(smppConfig(smsc))] });
    const campaignId = await oneRecipientFinal(rig);
    expect((await rig.recipients(campaignId))[0]).toMatchObject({ status: 'delivered', last_status: 'DELIVRD' });
    expect(await rig.parts(campaignId)).toMatchObject([{ state: 'delivered', attempts: 2 }]);
    expect(smsc.submits).toHaveLength(2);
    expect(rig.engine.stats().outcomes).toMatchObject({ accepted: 1, retried: 1 });
  });

  it('sends a part refused with a lasting temporary +CMS ERROR exactly engine.maxAttempts (3) times over a modem', async () => {
    const rig = await open();
    const dir = mkdtempSync(join(tmpdir(), 'smsgate-modem-attempts-'));
    const emulator = new ModemEmulator({ dir, name: 'm0', statusReports: false });
    cleanups.push(async () => {
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    });
    await emulator.plugIn();
    // +CMS ERROR 42 (congestion) is temporary (TS 24.011 §8.2.5.4); the emulator gives it to every submit.
    emulator.setSubmitMode('temporary');
    const modems = new ModemTransport(
      {
        name: 'modems', type: 'modem', devices: [{ path: emulator.path, messagesPerMinute: 6000 }], retryDelayMs: 10,
        // The modem worker's own retry setting: it must not multiply the engine's attempts.
        maxAttemptsPerPart: 3, reopenBackoffMs: [100], healthIntervalMs: 60_000,
      },
      { registrationPollMs: 50 },
    );
    // The engine stops its transport after the test, before the emulator closes.
    await rig.startEngine({ transports: [modems], engine: { maxAttempts: 3 } });
    const campaignId = await oneRecipientFinal(rig);
    expect((await rig.recipients(campaignId))[0]).toMatchObject({ status: 'undelivered', last_status: 'CMS_ERROR_42' });
    expect((await rig.parts(campaignId))[0]).toMatchObject({ state: 'undelivered', attempts: 3 });
    expect(emulator.submitPdusReceived).toBe(3);
    expect(emulator.commands.filter((c) => c.startsWith('AT+CMGS=')).length).toBe(3);
    expect(emulator.protocolErrors).toEqual([]);
  });

  it('writes one error line for 30 rejected submits and one line when submits work again', async () => {
    const rig = await open();
    const { logger, lines } = capturedLogger();
    const transport = new RejectingTransport('broken');
    await rig.startEngine({ transports: [transport], engine: { maxAttempts: 100 }, logger });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: Array.from({ length: 20 }, (_, i) => `3538712${String(i).padStart(5, '0')}`) });
    await until(async () => transport.rejections, (n) => n >= 30);
    transport.rejecting = false;
    await until(() => rig.parts(campaignId), (parts) => parts.length === 20 && parts.every((p) => p.state === 'submitted'));
    const submitLines = lines.filter((l) => l.msg.startsWith('transport.submit'));
    expect(submitLines.map((l) => l.level)).toEqual([50, 40]);
    expect(submitLines[0]?.msg).toMatch(/failed; retrying/);
    expect(submitLines[1]?.msg).toMatch(/works again$/);
  });
});
