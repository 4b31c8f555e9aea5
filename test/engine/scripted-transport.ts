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
  readonly windowSize: number;
  readonly maxPerSecond = 10_000;
  handlers: TransportHandlers | undefined;
  readonly held: HeldSubmit[] = [];
  stopCalls = 0;
  private state: TransportState = { state: 'binding' };

  constructor(readonly name = 'scripted', options: { windowSize?: number } = {}) {
    this.windowSize = options.windowSize ?? 4;
  }

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

  /** The link is lost (the lane holds its parts) until setUp(). */
  setDown(reason = 'link lost'): void {
    this.state = { state: 'down', reason };
    this.handlers?.onState(this.state);
  }

  setUp(): void {
    this.state = { state: 'bound' };
    this.handlers?.onState(this.state);
  }

  currentState(): TransportState {
    return this.state;
  }

  submit(message: OutboundMessage): Promise<PartOutcome[]> {
    return new Promise((resolve) => this.held.push({ message, answer: resolve }));
  }
}
