import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planMessage } from '../../../src/sms/index.js';
import { resolveSimulatorConfig, simulatorConfigSchema, SIMULATOR_DEMO_OUTCOMES, SimulatorTransport } from '../../../src/transports/simulator/index.js';
import { decodeSimulatorMessageId } from '../../../src/transports/simulator/message-id.js';
import type { OutboundMessage, TransportReceipt } from '../../../src/transports/transport.js';
import { mostInAnyWindow } from '../pace.js';
import { Ajv } from 'ajv';

function message(destination: string, text = 'hello', concatReference = 1): OutboundMessage {
  const plan = planMessage(text);
  return {
    messageKey: `k-${destination}`,
    destination,
    sender: { value: 'Acme', kind: 'alphanumeric', ton: 5, npi: 0 },
    encoding: plan.encoding,
    segments: plan.segments,
    concatReference,
  };
}

let transport: SimulatorTransport | undefined;
afterEach(async () => {
  await transport?.stop();
  transport = undefined;
});

async function started(config: Partial<ConstructorParameters<typeof SimulatorTransport>[0]> = {}): Promise<{ sim: SimulatorTransport; receipts: TransportReceipt[] }> {
  const receipts: TransportReceipt[] = [];
  const sim = new SimulatorTransport({ name: 'sim', type: 'simulator', receiptDelayMs: 5, ...config }, { recordAccepted: true });
  sim.setHandlers({ onReceipt: async (r) => void receipts.push(r), onInbound: async () => undefined, onState: () => undefined });
  await sim.start();
  transport = sim;
  return { sim, receipts };
}

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('SimulatorTransport', () => {
  it('uses the documented defaults', () => {
    expect(resolveSimulatorConfig({ name: 's', type: 'simulator' })).toMatchObject({
      maxPerSecond: 1_000,
      window: 100,
      receiptDelayMs: 1_000,
      defaultStatus: 'DELIVRD',
      outcomes: [],
    });
  });

  it('delivers every number when no outcome table is configured, whatever its last digit', async () => {
    const { sim, receipts } = await started();
    const numbers = Array.from({ length: 10 }, (_, digit) => `35387000000${digit}`);
    const outcomes = (await Promise.all(numbers.map((n) => sim.submit(message(n))))).flat();
    expect(outcomes.every((o) => o.kind === 'accepted')).toBe(true);
    await until(() => receipts.length === 10);
    expect(receipts.map((r) => r.status)).toEqual(Array(10).fill('DELIVRD'));
  });

  it('ships the demo table in config/simulator-demo.json', () => {
    const demo = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'config', 'simulator-demo.json'), 'utf8')) as {
      transports: { outcomes?: unknown }[];
    };
    expect(demo.transports[0]?.outcomes).toEqual(SIMULATOR_DEMO_OUTCOMES);
  });

  it('accepts parts with unique ids and reports DELIVRD receipts for them after the delay', async () => {
    const { receipts } = await started({ outcomes: [] });
    const sim = transport!;
    const outcomes = [
      ...(await sim.submit(message('353870000001'))),
      ...(await sim.submit(message('353870000002', 'z'.repeat(200)))),
    ];
    expect(outcomes.map((o) => [o.part, o.kind])).toEqual([
      [1, 'accepted'],
      [1, 'accepted'],
      [2, 'accepted'],
    ]);
    const ids = outcomes.map((o) => (o.kind === 'accepted' ? o.messageId : ''));
    expect(new Set(ids).size).toBe(3);
    await until(() => receipts.length === 3);
    expect(receipts.map((r) => r.messageId).sort()).toEqual([...ids].sort());
    expect(receipts.every((r) => r.status === 'DELIVRD' && r.final && r.raw.includes('stat:DELIVRD'))).toBe(true);
  });

  it('applies the demo outcome table by number suffix: 9 undelivered, 8 rejected, 7 retried once', async () => {
    const { sim, receipts } = await started({ outcomes: [...SIMULATOR_DEMO_OUTCOMES] });
    const [undeliv] = await sim.submit(message('353870000009'));
    const [rejected] = await sim.submit(message('353870000008'));
    const [first] = await sim.submit(message('353870000007'));
    const [second] = await sim.submit(message('353870000007'));
    expect(rejected).toEqual({ part: 1, kind: 'permanent', status: 'REJECTD' });
    expect(first).toEqual({ part: 1, kind: 'temporary', status: 'ESME_RTHROTTLED' });
    expect(second?.kind).toBe('accepted');
    await until(() => receipts.length === 2);
    const statusById = new Map(receipts.map((r) => [r.messageId, r.status]));
    expect(statusById.get(undeliv?.kind === 'accepted' ? undeliv.messageId : '')).toBe('UNDELIV');
    expect(statusById.get(second?.kind === 'accepted' ? second.messageId : '')).toBe('DELIVRD');
  });

  it('lets the longest matching suffix win', async () => {
    const { sim, receipts } = await started({ outcomes: [{ suffix: '9', status: 'UNDELIV' }, { suffix: '99', status: 'EXPIRED' }] });
    await sim.submit(message('353870000099'));
    await until(() => receipts.length === 1);
    expect(receipts[0]?.status).toBe('EXPIRED');
  });

  it('paces parts at maxPerSecond instead of refusing them', async () => {
    const maxPerSecond = 10;
    // Slots are 100 ms apart; a timer that fires late under load can push one part into the next
    // second's count, and the window starting at the first part takes one more at its edge.
    const tolerance = 2;
    const { sim } = await started({ maxPerSecond, outcomes: [] });
    const outcomes = (await Promise.all(Array.from({ length: 25 }, (_, i) => sim.submit(message(`3538700000${String(i).padStart(2, '0')}`))))).flat();
    expect(outcomes.every((o) => o.kind === 'accepted')).toBe(true);
    // The simulator's own submit time, carried in each message id.
    const submittedAtMs = outcomes.map((o) => (o.kind === 'accepted' ? decodeSimulatorMessageId(o.messageId)?.submittedAtMs : undefined));
    expect(submittedAtMs.every((at) => at !== undefined)).toBe(true);
    const mostPerSecond = mostInAnyWindow(submittedAtMs as number[], 1_000);
    expect(mostPerSecond).toBeLessThanOrEqual(maxPerSecond + tolerance);
    // 25 parts at 10/s cannot all fit in one second: the rate, not a burst, decided.
    expect(mostPerSecond).toBeLessThan(25);
  });

  it('refuses parts with TRANSPORT_DOWN while down, without touching its counters', async () => {
    const { sim } = await started({ outcomes: [] });
    sim.setDown('maintenance');
    expect(sim.currentState()).toEqual({ state: 'down', reason: 'maintenance' });
    expect(await sim.submit(message('353870000001', 'z'.repeat(200)))).toEqual([
      { part: 1, kind: 'not-sent', reason: 'TRANSPORT_DOWN' },
      { part: 2, kind: 'not-sent', reason: 'TRANSPORT_DOWN' },
    ]);
    expect(sim.accepted).toHaveLength(0);
  });

  it('sends only the requested part numbers on a retry', async () => {
    const { sim } = await started({ outcomes: [] });
    const outcomes = await sim.submit({ ...message('353870000001', 'q'.repeat(400)), partNumbers: [2] });
    expect(outcomes.map((o) => o.part)).toEqual([2]);
    expect(sim.accepted[0]?.text).toBe(planMessage('q'.repeat(400)).segments[1]);
  });

  it('on stop reports the receipts that fall due within the drain bound and waits until they are stored', async () => {
    const stored: string[] = [];
    const sim = new SimulatorTransport({ name: 'sim', type: 'simulator', receiptDelayMs: 200, outcomes: [] });
    sim.setHandlers({
      onReceipt: async (r) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        stored.push(r.messageId);
      },
      onInbound: async () => undefined,
      onState: () => undefined,
    });
    await sim.start();
    const outcomes = (await Promise.all([sim.submit(message('353870000001')), sim.submit(message('353870000002'))])).flat();
    expect(stored).toHaveLength(0);
    await sim.stop(10_000);
    expect(stored.sort()).toEqual(outcomes.map((o) => (o.kind === 'accepted' ? o.messageId : '')).sort());
    expect(sim.pendingReceipts()).toBe(0);
  });

  it('on stop leaves receipts due after the drain bound, and a later simulator re-issues them from the message ids alone', async () => {
    const config = { name: 'sim', type: 'simulator', receiptDelayMs: 150, outcomes: [{ suffix: '9', status: 'UNDELIV' }] } as const;
    const first = new SimulatorTransport({ ...config, receiptDelayMs: 3_600_000 });
    const late: TransportReceipt[] = [];
    first.setHandlers({ onReceipt: async (r) => void late.push(r), onInbound: async () => undefined, onState: () => undefined });
    await first.start();
    const submitted = (await Promise.all(['353870000001', '353870000009'].map((n) => first.submit(message(n))))).flat();
    const ids = submitted.map((o) => (o.kind === 'accepted' ? o.messageId : ''));
    await first.stop(50);
    expect(late).toHaveLength(0);
    expect(first.pendingReceipts()).toBe(0);

    // A new process: a simulator with other instance bits gets the ids of parts still 'submitted'.
    const { sim, receipts } = await started(config);
    expect(sim.recoverReceipts([...ids, 'not-a-simulator-id', '0a1b2c3d00000001'])).toBe(2);
    await until(() => receipts.length === 2);
    const statusById = new Map(receipts.map((r) => [r.messageId, r.status]));
    expect(statusById).toEqual(new Map([[ids[0], 'DELIVRD'], [ids[1], 'UNDELIV']]));
    expect(receipts.every((r) => r.final && r.raw.startsWith(`id:${r.messageId} `))).toBe(true);
  });

  it('re-issues a recovered receipt at once when its due time passed while it was down', async () => {
    const { sim, receipts } = await started({ receiptDelayMs: 3_600_000, outcomes: [] });
    const [outcome] = await sim.submit(message('353870000001'));
    const id = outcome?.kind === 'accepted' ? outcome.messageId : '';
    await sim.stop();
    const restarted = new SimulatorTransport({ name: 'sim', type: 'simulator', receiptDelayMs: 0, outcomes: [] });
    restarted.setHandlers({ onReceipt: async (r) => void receipts.push(r), onInbound: async () => undefined, onState: () => undefined });
    await restarted.start();
    transport = restarted;
    restarted.recoverReceipts([id]);
    await until(() => receipts.length === 1);
    expect(receipts[0]).toMatchObject({ messageId: id, status: 'DELIVRD', final: true });
  });

  it('offers a receipt again later when the handler rejects it (not stored: not acknowledged)', async () => {
    let calls = 0;
    const sim = new SimulatorTransport({ name: 'sim', type: 'simulator', receiptDelayMs: 1, outcomes: [] });
    transport = sim;
    sim.setHandlers({
      onReceipt: async () => {
        calls++;
        if (calls === 1) throw new Error('database busy');
      },
      onInbound: async () => undefined,
      onState: () => undefined,
    });
    await sim.start();
    await sim.submit(message('353870000001'));
    await until(() => calls === 2);
    expect(sim.pendingReceipts()).toBe(0);
  });

  it('validates its config entry with the exported JSON schema', () => {
    const validate = new Ajv({ allErrors: true }).compile(simulatorConfigSchema);
    expect(validate({ name: 'sim', type: 'simulator', outcomes: [{ suffix: '7', status: 'THROTTLED', kind: 'temporary', failures: 2 }] })).toBe(true);
    expect(validate({ name: 'sim', type: 'simulator', speed: 5 })).toBe(false);
    expect(validate({ name: 'sim', type: 'simulator', outcomes: [{ suffix: 'x', status: 'UNDELIV' }] })).toBe(false);
    expect(validate({ name: 'sim', type: 'simulator', defaultStatus: 'D'.repeat(31) })).toBe(false);
  });
});
