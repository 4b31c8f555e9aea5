/**
 * The one conformance suite every transport runs (SMPP, modem, simulator): submit, receipt,
 * temporary failure, permanent failure, stop.
 *
 * A transport's test file calls `describeTransportConformance('smpp', factory)`. The factory
 * builds a NOT yet started transport wired to a real peer it controls (a test SMSC, an emulated
 * modem on a pty, the simulator), plus hooks that make that peer produce each outcome:
 *
 * - `peer.nextSubmit(outcome)`: how the peer answers every part submitted from now on, until
 *   called again: 'accept' (take it and give an id), 'temporary' (a retryable refusal:
 *   throttled, queue full, network busy), 'permanent' (a final refusal: bad destination),
 *   'no-response' (say nothing until the transport gives up or stops). The suite calls it
 *   before every submit.
 * - `peer.sendReceipt(messageId, status)`: the peer reports a receipt for a part the transport
 *   accepted with that messageId (exactly the id from the 'accepted' outcome); resolves when the
 *   receipt has been sent (the suite then waits for onReceipt).
 * - `peer.submitsReceived()`: how many part submits the peer has read so far, answered or not
 *   (the suite waits on it instead of hoping a submit is in flight after some milliseconds).
 * - `peer.closeLink()`: the peer ends the link with submits outstanding: the SMSC closes the
 *   socket, the modem's pty goes away (socat killed), the simulator stops.
 * - `close()`: releases the peer after the suite stopped the transport.
 *
 * The suite sets handlers, starts the transport, waits until currentState() is 'bound', and
 * checks only what the Transport contract (src/transports/transport.ts) promises.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planMessage } from '../../src/sms/index.js';
import type { OutboundMessage, PartOutcome, Transport, TransportReceipt, TransportState } from '../../src/transports/transport.js';

export type PeerSubmitOutcome = 'accept' | 'temporary' | 'permanent' | 'no-response';

export interface ConformancePeer {
  nextSubmit(outcome: PeerSubmitOutcome): void;
  sendReceipt(messageId: string, status: 'DELIVRD' | 'UNDELIV'): Promise<void>;
  submitsReceived(): number;
  closeLink(): Promise<void>;
}

export interface ConformanceRig {
  transport: Transport;
  peer: ConformancePeer;
  close(): Promise<void>;
}

export type ConformanceFactory = () => Promise<ConformanceRig>;

/** The same transport with submit() replaced (a rig that records what its peer cannot tell it). */
export function withSubmit(inner: Transport, submit: Transport['submit']): Transport {
  return {
    name: inner.name,
    type: inner.type,
    windowSize: inner.windowSize,
    maxPerSecond: inner.maxPerSecond,
    setHandlers: (handlers) => inner.setHandlers(handlers),
    start: () => inner.start(),
    stop: (drainTimeoutMs) => inner.stop(drainTimeoutMs),
    currentState: () => inner.currentState(),
    submit,
  };
}

const MAX_STATUS_CHARS = 30;
/** How long outcomes may take once the link is gone: far below any timeout that would hide a hang (SMPP's responseTimeoutMs is 2 s in these rigs, the default 10 s). */
const OUTCOMES_AFTER_CLOSE_MS = 10_000;

function message(text: string): OutboundMessage {
  const plan = planMessage(text);
  return {
    messageKey: `conformance-${Math.random().toString(36).slice(2)}`,
    destination: '353871234567',
    sender: { value: 'smsgate', kind: 'alphanumeric', ton: 5, npi: 0 },
    encoding: plan.encoding,
    segments: plan.segments,
    concatReference: 42,
  };
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function settledWithin<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function accepted(outcome: PartOutcome | undefined): Extract<PartOutcome, { kind: 'accepted' }> {
  if (outcome?.kind !== 'accepted') throw new Error(`expected an accepted outcome, got ${JSON.stringify(outcome)}`);
  return outcome;
}

export function describeTransportConformance(name: string, factory: ConformanceFactory): void {
  describe(`Transport conformance: ${name}`, () => {
    let rig: ConformanceRig;
    let receipts: TransportReceipt[];
    let states: TransportState[];
    let stopped: boolean;

    beforeEach(async () => {
      rig = await factory();
      receipts = [];
      states = [];
      stopped = false;
      rig.transport.setHandlers({
        onReceipt: async (receipt) => {
          receipts.push(receipt);
        },
        onInbound: async () => undefined,
        onState: (state) => states.push(state),
      });
      await rig.transport.start();
      await waitFor(() => rig.transport.currentState().state === 'bound', `${name} to be bound`);
    });

    afterEach(async () => {
      if (!stopped) await rig.transport.stop(1_000);
      await rig.close();
    });

    it('declares a positive window and rate', () => {
      expect(rig.transport.windowSize).toBeGreaterThan(0);
      expect(rig.transport.maxPerSecond).toBeGreaterThan(0);
      expect(rig.transport.name.length).toBeGreaterThan(0);
    });

    it('accepts a submitted part and gives it a message id', async () => {
      rig.peer.nextSubmit('accept');
      const outcomes = await rig.transport.submit(message('conformance: accepted'));
      expect(outcomes).toHaveLength(1);
      const outcome = accepted(outcomes[0]);
      expect(outcome.part).toBe(1);
      expect(outcome.messageId.length).toBeGreaterThan(0);
    });

    it('gives every part of a long message exactly one outcome, by part number', async () => {
      rig.peer.nextSubmit('accept');
      const outcomes = await rig.transport.submit(message('x'.repeat(153 * 2 + 10)));
      expect(outcomes.map((outcome) => outcome.part).sort()).toEqual([1, 2, 3]);
      expect(outcomes.every((outcome) => outcome.kind === 'accepted')).toBe(true);
    });

    it('delivers the receipt through onReceipt with the accepted id', async () => {
      rig.peer.nextSubmit('accept');
      const outcome = accepted((await rig.transport.submit(message('conformance: receipt')))[0]);
      await rig.peer.sendReceipt(outcome.messageId, 'DELIVRD');
      await waitFor(() => receipts.length > 0, 'onReceipt');
      expect(receipts[0]).toMatchObject({ messageId: outcome.messageId, final: true });
      expect(receipts[0]!.status.startsWith('DELIV')).toBe(true);
      expect(receipts[0]!.raw.length).toBeGreaterThan(0);
    });

    it('reports an undeliverable receipt as final and not delivered', async () => {
      rig.peer.nextSubmit('accept');
      const outcome = accepted((await rig.transport.submit(message('conformance: undeliv')))[0]);
      await rig.peer.sendReceipt(outcome.messageId, 'UNDELIV');
      await waitFor(() => receipts.length > 0, 'onReceipt');
      expect(receipts[0]).toMatchObject({ messageId: outcome.messageId, final: true });
      expect(receipts[0]!.status.startsWith('DELIV')).toBe(false);
    });

    it('reports a temporary refusal as temporary', async () => {
      rig.peer.nextSubmit('temporary');
      const [outcome] = await rig.transport.submit(message('conformance: temporary'));
      expect(outcome).toMatchObject({ part: 1, kind: 'temporary' });
      expect(outcome?.kind === 'temporary' && outcome.status.length).toBeGreaterThan(0);
      // The transport retries nothing itself (PartOutcome contract): one refusal, one send.
      expect(rig.peer.submitsReceived()).toBe(1);
    });

    it('reports a permanent refusal as permanent with a status of at most 30 characters', async () => {
      rig.peer.nextSubmit('permanent');
      const [outcome] = await rig.transport.submit(message('conformance: permanent'));
      expect(outcome).toMatchObject({ part: 1, kind: 'permanent' });
      const status = outcome?.kind === 'permanent' ? outcome.status : '';
      expect(status.length).toBeGreaterThan(0);
      expect(status.length).toBeLessThanOrEqual(MAX_STATUS_CHARS);
    });

    it('stop() resolves a submit the peer read as temporary, and a later one as not-sent TRANSPORT_STOPPED', async () => {
      rig.peer.nextSubmit('no-response');
      const pending = rig.transport.submit(message('conformance: pending at stop'));
      await waitFor(() => rig.peer.submitsReceived() >= 1, 'the peer to read the submit');
      stopped = true;
      await rig.transport.stop(200);
      const [outcome] = await pending;
      expect(outcome).toMatchObject({ part: 1, kind: 'temporary' });
      const [late] = await rig.transport.submit(message('conformance: after stop'));
      expect(late?.kind).toBe('not-sent');
      // The simulator has no stopping state of its own: stopped, it is down.
      expect(['TRANSPORT_STOPPED', 'TRANSPORT_DOWN']).toContain(late?.kind === 'not-sent' ? late.reason : '');
    });

    it('the peer closes the link mid-submit: the part it read is temporary, the rest temporary or not-sent, none hangs', async () => {
      rig.peer.nextSubmit('no-response');
      const pending = rig.transport.submit(message('y'.repeat(153 * 2 + 10)));
      await waitFor(() => rig.peer.submitsReceived() >= 1, 'the peer to read a submit');
      await rig.peer.closeLink();
      const outcomes = await settledWithin(pending, OUTCOMES_AFTER_CLOSE_MS, 'the submit after the link closed');
      expect(outcomes.map((outcome) => outcome.part).sort()).toEqual([1, 2, 3]);
      const first = outcomes.find((outcome) => outcome.part === 1);
      expect(first?.kind).toBe('temporary');
      for (const outcome of outcomes) {
        expect(['temporary', 'not-sent']).toContain(outcome.kind);
        if (outcome.kind === 'temporary') expect(outcome.status.length).toBeGreaterThan(0);
      }
    });
  });
}
