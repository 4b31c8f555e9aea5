/**
 * A transport whose every submit waits until the test answers it: for orderings a real peer makes
 * rare (a receipt before its submit response, a stop with submits in flight).
 */
import type { OutboundMessage, PartOutcome, Transport, TransportHandlers, TransportState } from '../../src/transports/transport.js';

export interface HeldSubmit {
  message: OutboundMessage;
  answer(outcomes: PartOutcome[]): void;
}

export class ScriptedTransport implements Transport {
  readonly type = 'simulator' as const;
  readonly windowSize = 4;
  readonly maxPerSecond = 10_000;
  handlers: TransportHandlers | undefined;
  readonly held: HeldSubmit[] = [];
  stopCalls = 0;
  private state: TransportState = { state: 'binding' };

  constructor(readonly name = 'scripted') {}

  setHandlers(handlers: TransportHandlers): void {
    this.handlers = handlers;
  }

  async start(): Promise<void> {
    this.state = { state: 'bound' };
    this.handlers?.onState(this.state);
  }

  async stop(): Promise<void> {
    this.stopCalls++;
    this.state = { state: 'down', reason: 'stopped' };
    // Transport contract: every submit still pending resolves (temporary: the peer had it).
    for (const h of this.held.splice(0)) {
      h.answer((h.message.partNumbers ?? h.message.segments.map((_, i) => i + 1)).map((part) => ({ part, kind: 'temporary', status: 'STOPPED' })));
    }
  }

  currentState(): TransportState {
    return this.state;
  }

  submit(message: OutboundMessage): Promise<PartOutcome[]> {
    return new Promise((resolve) => this.held.push({ message, answer: resolve }));
  }
}
