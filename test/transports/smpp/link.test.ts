import { afterEach, describe, expect, it } from 'vitest';
import type { PartOutcome } from '../../../src/transports/transport.js';
import { mostInAnyWindow } from '../pace.js';
import { outbound, startRig, waitFor, type Rig } from './helpers.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

function kinds(outcomes: PartOutcome[]): string[] {
  return outcomes.map((outcome) => {
    if (outcome.kind === 'accepted') return 'accepted';
    return `${outcome.kind}:${outcome.kind === 'not-sent' ? outcome.reason : outcome.status}`;
  });
}

describe('bind failure', () => {
  it('reports the refusal in the down reason and does not retry for 30 s', async () => {
    rig = await startRig({}, { password: 'wrong', binds: 2, reconnect: { initialDelayMs: 10, maxDelayMs: 50 } });
    const state = rig.transport.currentState();
    expect(state.state).toBe('down');
    expect(state.state === 'down' && state.reason).toContain('ESME_RINVPASWD (0x0000000E): Invalid password');
    expect(state.state === 'down' && state.reason).toMatch(/retry in (1[5-9]|2\d|30) s/);
    // Fast reconnect settings (10 ms) do not apply to an auth failure: count attempts over 2 s.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(rig.smsc.bindAttempts).toHaveLength(2);
    expect(rig.smsc.bindAttempts.every((attempt) => !attempt.accepted)).toBe(true);
    expect(rig.transport.bindAttempts()).toEqual([1, 1]);
    expect(rig.handlers.states.at(-1)?.state).toBe('down');
  });
});

describe('window', () => {
  it('never has more than `window` submits outstanding per bind, and uses every bind', async () => {
    rig = await startRig({ responseDelayMs: 50 }, { window: 3, binds: 2 });
    const messages = Array.from({ length: 40 }, (_, index) => outbound(`message ${index}`));
    const outcomes = (await Promise.all(messages.map((message) => rig!.transport.submit(message)))).flat();
    expect(outcomes).toHaveLength(40);
    expect(outcomes.every((outcome) => outcome.kind === 'accepted')).toBe(true);
    expect(rig.smsc.maxOutstandingSubmits).toBe(3);
    expect(new Set(rig.smsc.submits.map((submit) => submit.sessionId)).size).toBe(2);
    expect(rig.transport.windowSize).toBe(6);
  });

  it('holds the window for the parts of one long message too', async () => {
    rig = await startRig({ responseDelayMs: 10 }, { window: 2 });
    const outcomes = await rig.transport.submit(outbound('z'.repeat(153 * 6)));
    expect(kinds(outcomes)).toEqual(Array(6).fill('accepted'));
    expect(rig.smsc.maxOutstandingSubmits).toBe(2);
  });
});

describe('throttling', () => {
  it('returns ESME_RTHROTTLED parts with retryAfterMs, pauses the bind, then recovers', async () => {
    let throttleNext = 2;
    rig = await startRig({
      onSubmit: () => (throttleNext-- > 0 ? { kind: 'status', commandStatus: 0x58 } : { kind: 'ok' }),
    });
    const first = await rig.transport.submit(outbound('one'));
    expect(first).toEqual([{ part: 1, kind: 'temporary', status: 'ESME_RTHROTTLED', errorCode: 0x58, retryAfterMs: 1000 }]);
    expect(rig.transport.windowUsage()[0]!.slowDownLevel).toBe(1);
    // The engine retries after retryAfterMs; the bind is paused until then, so nothing reaches
    // the SMSC before the pause ends even if the engine retried at once.
    const submitsBefore = rig.smsc.submits.length;
    const second = await rig.transport.submit(outbound('two'));
    expect(rig.smsc.submits.length).toBe(submitsBefore + 1);
    expect(second).toEqual([{ part: 1, kind: 'temporary', status: 'ESME_RTHROTTLED', errorCode: 0x58, retryAfterMs: 2000 }]);
    expect(rig.transport.windowUsage()[0]!.slowDownLevel).toBe(2);
    const third = await rig.transport.submit(outbound('three'));
    expect(kinds(third)).toEqual(['accepted']);
    expect(rig.transport.windowUsage()[0]!.slowDownLevel).toBe(1);
    await rig.transport.submit(outbound('four'));
    expect(rig.transport.windowUsage()[0]!.slowDownLevel).toBe(0);
  });

  it('treats ESME_RMSGQFUL the same way', async () => {
    rig = await startRig({ onSubmit: () => ({ kind: 'status', commandStatus: 0x14 }) });
    expect(await rig.transport.submit(outbound('x'))).toEqual([
      { part: 1, kind: 'temporary', status: 'ESME_RMSGQFUL', errorCode: 0x14, retryAfterMs: 1000 },
    ]);
  });
});

describe('connection loss', () => {
  it('returns every unacknowledged part temporary (or not-sent once down), reconnects, and a retry delivers all', async () => {
    rig = await startRig({ dropAfterSubmits: 5, responseDelayMs: 30 }, { window: 10 });
    const messages = Array.from({ length: 12 }, (_, index) => outbound(`m${index}`));
    const first = await Promise.all(messages.map((message) => rig!.transport.submit(message)));
    const failed = messages.filter((_, index) => first[index]![0]!.kind !== 'accepted');
    expect(failed.length).toBeGreaterThan(0);
    for (const outcomes of first) {
      expect(['accepted', 'temporary:CONNECTION_LOST', 'not-sent:TRANSPORT_DOWN']).toContain(kinds(outcomes)[0]);
    }
    await waitFor(() => rig!.transport.currentState().state === 'bound', 'rebind');
    expect(rig.smsc.bindAttempts.length).toBe(2);
    const retried = await Promise.all(failed.map((message) => rig!.transport.submit(message)));
    expect(retried.flat().every((outcome) => outcome.kind === 'accepted')).toBe(true);
    const accepted = first.flat().filter((outcome) => outcome.kind === 'accepted').length + retried.length;
    expect(accepted).toBe(12);
  });

  it('declares the link dead when enquire_link goes unanswered, and rebinds', async () => {
    rig = await startRig({ enquireLink: 'ignore' }, { enquireLinkIntervalMs: 200, responseTimeoutMs: 500 });
    const deadLink = (): boolean =>
      rig!.handlers.states.some((state) => state.state === 'down' && state.reason.includes('ENQUIRE_LINK_TIMEOUT'));
    await waitFor(deadLink, 'link declared dead');
    await waitFor(() => rig!.smsc.bindAttempts.length >= 2, 'rebind');
    expect(rig.smsc.enquireLinksReceived).toBeGreaterThanOrEqual(1);
  });

  it('keeps a slow but answering link up', async () => {
    rig = await startRig({ enquireLinkDelayMs: 100 }, { enquireLinkIntervalMs: 150, responseTimeoutMs: 1_000 });
    await waitFor(() => rig!.smsc.enquireLinksReceived >= 3, 'three enquire_links');
    expect(rig.smsc.bindAttempts).toHaveLength(1);
    expect(rig.transport.currentState().state).toBe('bound');
  });

  it('answers the SMSC enquire_link', async () => {
    rig = await startRig();
    expect(await rig.smsc.sendEnquireLink()).toBe(true);
  });

  it('answers the SMSC unbind with unbind_resp and binds again', async () => {
    rig = await startRig();
    rig.smsc.sendUnbind();
    await waitFor(() => rig!.smsc.bindAttempts.length >= 2 && rig!.transport.currentState().state === 'bound', 'rebind after unbind');
    expect(rig.smsc.pdus('unbind_resp')).toHaveLength(1);
  });
});

describe('stop', () => {
  it('waits for in-flight responses, then unbinds', async () => {
    rig = await startRig({ responseDelayMs: 300 });
    const pending = rig.transport.submit(outbound('in flight'));
    await waitFor(() => rig!.smsc.submits.length === 1, 'submit on the wire');
    await rig.transport.stop(5_000);
    expect(kinds(await pending)).toEqual(['accepted']);
    expect(rig.smsc.pdus('unbind')).toHaveLength(1);
    expect(rig.transport.currentState()).toEqual({ state: 'down', reason: 'stopped' });
    expect(kinds(await rig.transport.submit(outbound('late')))).toEqual(['not-sent:TRANSPORT_STOPPED']);
  });

  it('closes without unbind_resp after a bounded wait, however long responseTimeoutMs is', async () => {
    // Without the bound, stop() would wait 60 s for unbind_resp and the test would time out.
    rig = await startRig({ unbind: 'ignore' }, { responseTimeoutMs: 60_000 });
    await rig.transport.stop(100);
    expect(rig.smsc.pdus('unbind')).toHaveLength(1);
    expect(rig.transport.currentState()).toEqual({ state: 'down', reason: 'stopped' });
  });

  it('gives up waiting after drainTimeoutMs and resolves the rest as TRANSPORT_STOPPED', async () => {
    rig = await startRig({ onSubmit: () => ({ kind: 'never' }) }, { responseTimeoutMs: 30_000 });
    const pending = rig.transport.submit(outbound('never answered'));
    await waitFor(() => rig!.smsc.submits.length === 1, 'submit on the wire');
    await rig.transport.stop(200);
    expect(kinds(await pending)).toEqual(['temporary:TRANSPORT_STOPPED']);
  });
});

describe('logging', () => {
  it('never writes the password, even when the bind is refused', async () => {
    const { createLogger } = await import('../../../src/common/log.js');
    const { SmppTransport } = await import('../../../src/transports/smpp/index.js');
    const { TestSmsc } = await import('../../support/smsc/test-smsc.js');
    const { smppConfig } = await import('./helpers.js');
    const { PassThrough } = await import('node:stream');
    const lines: string[] = [];
    const destination = new PassThrough();
    destination.on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
    const smsc = await TestSmsc.start();
    const transport = new SmppTransport(smppConfig(smsc, { password: 'pw12345x' }), { logger: createLogger({ level: 'debug', destination }) });
    await transport.start();
    await transport.stop(100);
    await smsc.stop();
    const log = lines.join('');
    expect(log).toContain('ESME_RINVPASWD');
    expect(log).not.toContain('pw12345x');
  });
});

describe('rate', () => {
  it('paces parts at maxPerSecond across all binds, counted from the SMSC’s arrival times', async () => {
    const maxPerSecond = 20;
    // The carrier's token bucket may start full: ceil(20 / 10) = 2 tokens of burst
    // (TokenBucket.capacityFor), plus one for the part on the window's edge.
    const tolerance = 2 + 1;
    const arrivedAtMs: number[] = [];
    rig = await startRig(
      {
        onSubmit: () => {
          arrivedAtMs.push(Date.now());
          return { kind: 'ok' };
        },
      },
      { binds: 2, maxPerSecond },
    );
    await waitFor(() => rig!.transport.links().every((link) => link.state === 'bound'), 'both binds bound');
    const outcomes = (await Promise.all(Array.from({ length: 50 }, (_, i) => rig!.transport.submit(outbound(`paced ${i}`))))).flat();
    expect(outcomes.every((outcome) => outcome.kind === 'accepted')).toBe(true);
    expect(arrivedAtMs).toHaveLength(50);
    const mostPerSecond = mostInAnyWindow(arrivedAtMs, 1_000);
    expect(mostPerSecond).toBeLessThanOrEqual(maxPerSecond + tolerance);
    expect(mostPerSecond).toBeGreaterThan(0);
  });
});
