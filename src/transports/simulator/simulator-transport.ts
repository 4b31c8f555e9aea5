/**
 * The simulator transport: an in-process SMSC for the embedded default, demos and tests. It
 * accepts parts at maxPerSecond (submits beyond the rate wait their turn), gives each accepted
 * part a unique message id, and reports a receipt receiptDelayMs later: defaultStatus, or what
 * the outcome table says for the number's suffix. Receipts wait in one FIFO with one timer (the
 * delay is the same for all, so the FIFO is in due order); a receipt whose handler rejects is
 * offered again after the delay, like an SMSC retrying an unacknowledged deliver_sm.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../log.js';
import { silentLogger } from '../../log.js';
import type {
  OutboundMessage,
  PartOutcome,
  Transport,
  TransportHandlers,
  TransportReceipt,
  TransportState,
} from '../transport.js';
import { resolveSimulatorConfig, type ResolvedSimulatorConfig, type ResolvedSimulatorOutcome, type SimulatorTransportConfig } from './config.js';

/** Transport contract: the status of parts refused while the transport is down. */
const TRANSPORT_DOWN = 'TRANSPORT_DOWN';
/** Bound on remembered per-part attempt counts for 'temporary' outcomes. */
const MAX_TRACKED_ATTEMPTS = 100_000;

/**
 * Overrides the outcome table for every part (tests, demos): accept (receipt with defaultStatus),
 * reject (permanent failure REJECTD), temporary (ESME_RTHROTTLED), hold (no answer until stop(),
 * like an SMSC that never responds; then failed-temporary).
 */
export type ForcedOutcome = 'accept' | 'reject' | 'temporary' | 'hold';

interface DueReceipt {
  dueAt: number;
  receipt: TransportReceipt;
}

export interface SimulatorOptions {
  logger?: Logger;
  /** Keep every accepted part in `accepted` (tests); off by default so a long run does not grow memory. */
  recordAccepted?: boolean;
}

export class SimulatorTransport implements Transport {
  readonly type = 'simulator' as const;
  readonly name: string;
  readonly windowSize: number;
  readonly maxPerSecond: number;
  private readonly config: ResolvedSimulatorConfig;
  private readonly logger: Logger;
  private readonly idPrefix = randomBytes(4).toString('hex');
  private handlers: TransportHandlers | undefined;
  private state: TransportState = { state: 'down', reason: 'not started' };
  private nextId = 0;
  private nextSlotAt = 0;
  private readonly receipts: DueReceipt[] = [];
  private receiptTimer: NodeJS.Timeout | undefined;
  private readonly attemptsByPart = new Map<string, number>();
  private readonly waitingForSlot = new Set<() => void>();
  private forced: ForcedOutcome | undefined;
  private readonly recordAccepted: boolean;
  /** Every part accepted since start, in order, when options.recordAccepted is set. */
  readonly accepted: { messageId: string; destination: string; part: number; text: string }[] = [];

  constructor(config: SimulatorTransportConfig, options: SimulatorOptions = {}) {
    this.config = resolveSimulatorConfig(config);
    this.name = this.config.name;
    this.windowSize = this.config.window;
    this.maxPerSecond = this.config.maxPerSecond;
    this.logger = (options.logger ?? silentLogger()).child({ transport: this.name });
    this.recordAccepted = options.recordAccepted ?? false;
  }

  setHandlers(handlers: TransportHandlers): void {
    this.handlers = handlers;
  }

  async start(): Promise<void> {
    this.setState({ state: 'bound', detail: 'simulator' });
  }

  async stop(): Promise<void> {
    this.setState({ state: 'down', reason: 'stopped' });
    for (const release of this.waitingForSlot) release();
    this.waitingForSlot.clear();
    if (this.receiptTimer !== undefined) clearTimeout(this.receiptTimer);
    this.receiptTimer = undefined;
    if (this.receipts.length > 0) {
      // An in-process SMSC keeps nothing across a stop: say how many receipts will never come.
      this.logger.warn({ receipts: this.receipts.length }, 'simulator stopped with receipts not yet reported: they are dropped');
      this.receipts.length = 0;
    }
  }

  /** Test and demo hook: the link goes down (submits fail with TRANSPORT_DOWN) until setUp(). */
  setDown(reason: string): void {
    this.setState({ state: 'down', reason });
  }

  setUp(): void {
    this.setState({ state: 'bound', detail: 'simulator' });
  }

  currentState(): TransportState {
    return this.state;
  }

  /**
   * Test and demo hook: reports a receipt now, as an SMSC would (any id, any status, final or not),
   * e.g. a duplicate, an out-of-order or an intermediate receipt. Resolves when the engine stored it.
   */
  reportReceipt(receipt: { messageId: string; status: string; final?: boolean }): Promise<void> {
    if (this.handlers === undefined) return Promise.reject(new Error('no handlers set'));
    return this.handlers.onReceipt({
      messageId: receipt.messageId,
      status: receipt.status,
      final: receipt.final ?? true,
      raw: `id:${receipt.messageId} stat:${receipt.status}`,
    });
  }

  /** Forces every part's outcome until called with undefined. */
  forceOutcome(outcome: ForcedOutcome | undefined): void {
    this.forced = outcome;
  }

  /** Receipts accepted but not yet reported. */
  pendingReceipts(): number {
    return this.receipts.length;
  }

  async submit(message: OutboundMessage): Promise<PartOutcome[]> {
    const partNumbers = message.partNumbers ?? message.segments.map((_, i) => i + 1);
    const outcomes: PartOutcome[] = [];
    for (const part of partNumbers) {
      if (this.state.state !== 'bound') {
        outcomes.push({ part, kind: 'failed-temporary', status: TRANSPORT_DOWN });
        continue;
      }
      if (this.forced === 'hold') await this.waitForStop();
      else await this.takeSlot();
      if (this.state.state !== 'bound') {
        outcomes.push({ part, kind: 'failed-temporary', status: TRANSPORT_DOWN });
        continue;
      }
      outcomes.push(this.submitPart(message, part));
    }
    return outcomes;
  }

  private submitPart(message: OutboundMessage, part: number): PartOutcome {
    if (this.forced === 'reject') return { part, kind: 'failed-permanent', status: 'REJECTD' };
    if (this.forced === 'temporary') return { part, kind: 'failed-temporary', status: 'ESME_RTHROTTLED' };
    const rule = this.forced === 'accept' ? undefined : this.outcomeFor(message.destination);
    if (rule?.kind === 'reject') return { part, kind: 'failed-permanent', status: rule.status };
    if (rule?.kind === 'temporary') {
      const key = `${message.destination}/${message.concatReference}/${part}`;
      const failedSoFar = this.attemptsByPart.get(key) ?? 0;
      if (rule.failures === undefined || failedSoFar < rule.failures) {
        this.rememberAttempt(key, failedSoFar + 1);
        return { part, kind: 'failed-temporary', status: rule.status };
      }
      this.attemptsByPart.delete(key);
    }
    const messageId = `${this.idPrefix}${(this.nextId++).toString(16).padStart(8, '0')}`;
    if (this.recordAccepted) this.accepted.push({ messageId, destination: message.destination, part, text: message.segments[part - 1] ?? '' });
    const status = rule?.kind === 'receipt' ? rule.status : this.config.defaultStatus;
    this.scheduleReceipt(messageId, status);
    return { part, kind: 'accepted', messageId };
  }

  private outcomeFor(destination: string): ResolvedSimulatorOutcome | undefined {
    let best: ResolvedSimulatorOutcome | undefined;
    for (const rule of this.config.outcomes) {
      if (destination.endsWith(rule.suffix) && (best === undefined || rule.suffix.length > best.suffix.length)) best = rule;
    }
    return best;
  }

  private rememberAttempt(key: string, attempts: number): void {
    if (this.attemptsByPart.size >= MAX_TRACKED_ATTEMPTS) {
      const oldest = this.attemptsByPart.keys().next().value;
      if (oldest !== undefined) this.attemptsByPart.delete(oldest);
    }
    this.attemptsByPart.set(key, attempts);
  }

  /** Paces parts at maxPerSecond: each takes the next free slot, waiting for it when it is ahead. */
  private async takeSlot(): Promise<void> {
    const now = Date.now();
    const slot = Math.max(now, this.nextSlotAt);
    this.nextSlotAt = slot + 1_000 / this.maxPerSecond;
    const waitMs = slot - now;
    if (waitMs < 1) return;
    await new Promise<void>((resolve) => {
      const release = (): void => {
        clearTimeout(timer);
        this.waitingForSlot.delete(release);
        resolve();
      };
      const timer = setTimeout(release, waitMs);
      this.waitingForSlot.add(release);
    });
  }

  private waitForStop(): Promise<void> {
    return new Promise<void>((resolve) => {
      const release = (): void => {
        this.waitingForSlot.delete(release);
        resolve();
      };
      this.waitingForSlot.add(release);
    });
  }

  private scheduleReceipt(messageId: string, status: string): void {
    const nowMs = Date.now();
    const receipt: TransportReceipt = {
      messageId,
      status,
      final: true,
      doneAt: new Date(nowMs + this.config.receiptDelayMs).toISOString(),
      // The SMPP 3.4 Appendix B shape, so the audit trail looks like a real SMSC's.
      raw: `id:${messageId} sub:001 dlvrd:${status.startsWith('DELIV') ? '001' : '000'} stat:${status} err:000 text:`,
    };
    this.receipts.push({ dueAt: nowMs + this.config.receiptDelayMs, receipt });
    this.armReceiptTimer();
  }

  private armReceiptTimer(): void {
    if (this.receiptTimer !== undefined) return;
    const head = this.receipts[0];
    if (head === undefined) return;
    this.receiptTimer = setTimeout(() => {
      this.receiptTimer = undefined;
      this.reportDueReceipts();
    }, Math.max(0, head.dueAt - Date.now()));
  }

  private reportDueReceipts(): void {
    const nowMs = Date.now();
    const handlers = this.handlers;
    while (this.receipts.length > 0 && (this.receipts[0]?.dueAt ?? Infinity) <= nowMs) {
      const due = this.receipts.shift() as DueReceipt;
      if (handlers === undefined) {
        this.retryLater(due.receipt);
        continue;
      }
      handlers.onReceipt(due.receipt).catch((err: unknown) => {
        this.logger.warn({ err, messageId: due.receipt.messageId }, 'receipt not stored by the engine: offering it again later');
        this.retryLater(due.receipt);
      });
    }
    this.armReceiptTimer();
  }

  private retryLater(receipt: TransportReceipt): void {
    if (this.state.state === 'down' && this.state.reason === 'stopped') return;
    this.receipts.push({ dueAt: Date.now() + Math.max(this.config.receiptDelayMs, 100), receipt });
    this.armReceiptTimer();
  }

  private setState(state: TransportState): void {
    this.state = state;
    this.handlers?.onState(state);
  }
}
