/**
 * The simulator transport: an in-process SMSC for the embedded default, demos and tests. It
 * accepts parts at maxPerSecond (submits beyond the rate wait their turn), gives each accepted
 * part a unique message id, and reports a receipt receiptDelayMs later: defaultStatus, or what
 * the outcome table says for the number's suffix. Receipts wait in one FIFO with one timer (the
 * delay is the same for all, so the FIFO is in due order); a receipt whose handler rejects is
 * offered again after the delay, like an SMSC retrying an unacknowledged deliver_sm.
 *
 * Pending receipts live in memory only, so nothing may be lost at a stop: a clean stop reports
 * every receipt that falls due within the drain bound, and each message id encodes its submit
 * time and receipt status (message-id.ts) so that after a crash or an early stop the engine hands
 * the ids of parts still waiting back to recoverReceipts() and the receipts are reported then.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../common/log.js';
import { silentLogger } from '../../common/log.js';
import type {
  OutboundMessage,
  PartOutcome,
  Transport,
  TransportHandlers,
  TransportReceipt,
  TransportState,
} from '../transport.js';
import { resolveSimulatorConfig, type ResolvedSimulatorConfig, type ResolvedSimulatorOutcome, type SimulatorTransportConfig } from './config.js';
import { decodeSimulatorMessageId, encodeSimulatorMessageId } from './message-id.js';

/** Bound on remembered per-part attempt counts for 'temporary' outcomes. */
const MAX_TRACKED_ATTEMPTS = 100_000;

/**
 * Overrides the outcome table for every part (tests, demos): accept (receipt with defaultStatus),
 * reject (permanent failure REJECTD), temporary (ESME_RTHROTTLED), hold (no answer until stop(),
 * like an SMSC that never responds; then temporary TRANSPORT_STOPPED, the result being unknown).
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
  /** Receipts not yet reported, in due order; `receiptsHead` is the first unreported index. */
  private receipts: DueReceipt[] = [];
  private receiptsHead = 0;
  /** Receipts handed to the engine whose onReceipt promise has not settled yet. */
  private receiptsInFlight = 0;
  private receiptTimer: NodeJS.Timeout | undefined;
  /** Set once stop() finished: no receipt is queued or reported until the next start(). */
  private closed = false;
  /** Wakes a stop() that waits for receipts to drain. */
  private onReceiptsProgress: (() => void) | undefined;
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
    this.closed = false;
    this.setState({ state: 'bound', detail: 'simulator' });
  }

  /**
   * Stops taking submits, then keeps reporting receipts until none is left that falls due within
   * drainTimeoutMs (and every reported one was stored). Receipts still waiting after that are not
   * lost: their parts stay 'submitted' and the next start re-issues them (recoverReceipts).
   */
  async stop(drainTimeoutMs = 0): Promise<void> {
    this.setState({ state: 'down', reason: 'stopped' });
    for (const release of this.waitingForSlot) release();
    this.waitingForSlot.clear();
    const deadline = Date.now() + drainTimeoutMs;
    while (this.receiptsInFlight > 0 || (this.headDueAt() ?? Infinity) <= deadline) {
      const waitMs = deadline - Date.now();
      if (waitMs <= 0) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.onReceiptsProgress = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.onReceiptsProgress = undefined;
    }
    if (this.receiptTimer !== undefined) clearTimeout(this.receiptTimer);
    this.receiptTimer = undefined;
    this.closed = true;
    const left = this.pendingReceipts();
    if (left > 0) this.logger.info({ receipts: left }, 'simulator stopped before these receipts fell due: the next start reports them again from the stored message ids');
    this.receipts = [];
    this.receiptsHead = 0;
  }

  /**
   * Crash recovery: reports a receipt for every id this simulator made (in any earlier run), at
   * its original due time or now if that has passed. Ids of another format are ignored.
   */
  recoverReceipts(messageIds: readonly string[]): number {
    const recovered: DueReceipt[] = [];
    for (const messageId of messageIds) {
      const decoded = decodeSimulatorMessageId(messageId);
      if (decoded === undefined) continue;
      recovered.push({ dueAt: decoded.submittedAtMs + this.config.receiptDelayMs, receipt: receiptFor(messageId, decoded.status, decoded.submittedAtMs + this.config.receiptDelayMs) });
    }
    if (recovered.length === 0) return 0;
    // Rare (once per start): merge and sort keeps the FIFO in due order.
    this.receipts = [...this.receipts.slice(this.receiptsHead), ...recovered].sort((a, b) => a.dueAt - b.dueAt);
    this.receiptsHead = 0;
    if (this.receiptTimer !== undefined) clearTimeout(this.receiptTimer);
    this.receiptTimer = undefined;
    this.armReceiptTimer();
    this.logger.info({ receipts: recovered.length }, 'simulator re-issues receipts of parts submitted before the last stop');
    return recovered.length;
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
    return this.receipts.length - this.receiptsHead;
  }

  async submit(message: OutboundMessage): Promise<PartOutcome[]> {
    const partNumbers = message.partNumbers ?? message.segments.map((_, i) => i + 1);
    const outcomes: PartOutcome[] = [];
    for (const part of partNumbers) {
      if (this.state.state !== 'bound') {
        outcomes.push({ part, kind: 'not-sent', reason: 'TRANSPORT_DOWN' });
        continue;
      }
      if (this.forced === 'hold') {
        // The part reached the simulated SMSC, which never answered: like a lost submit_sm_resp,
        // the result is unknown, so the engine spends an attempt on it.
        await this.waitForStop();
        outcomes.push({ part, kind: 'temporary', status: 'TRANSPORT_STOPPED' });
        continue;
      }
      await this.takeSlot();
      if (this.state.state !== 'bound') {
        outcomes.push({ part, kind: 'not-sent', reason: 'TRANSPORT_DOWN' });
        continue;
      }
      outcomes.push(this.submitPart(message, part));
    }
    return outcomes;
  }

  private submitPart(message: OutboundMessage, part: number): PartOutcome {
    if (this.forced === 'reject') return { part, kind: 'permanent', status: 'REJECTD' };
    if (this.forced === 'temporary') return { part, kind: 'temporary', status: 'ESME_RTHROTTLED' };
    const rule = this.forced === 'accept' ? undefined : this.outcomeFor(message.destination);
    if (rule?.kind === 'reject') return { part, kind: 'permanent', status: rule.status };
    if (rule?.kind === 'temporary') {
      const key = `${message.destination}/${message.concatReference}/${part}`;
      const failedSoFar = this.attemptsByPart.get(key) ?? 0;
      if (rule.failures === undefined || failedSoFar < rule.failures) {
        this.rememberAttempt(key, failedSoFar + 1);
        return { part, kind: 'temporary', status: rule.status };
      }
      this.attemptsByPart.delete(key);
    }
    const status = rule?.kind === 'receipt' ? rule.status : this.config.defaultStatus;
    const submittedAtMs = Date.now();
    const messageId = encodeSimulatorMessageId({ instance: this.idPrefix, sequence: this.nextId++, submittedAtMs, status });
    if (this.recordAccepted) this.accepted.push({ messageId, destination: message.destination, part, text: message.segments[part - 1] ?? '' });
    this.scheduleReceipt(messageId, status, submittedAtMs);
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

  private scheduleReceipt(messageId: string, status: string, submittedAtMs: number): void {
    const dueAt = submittedAtMs + this.config.receiptDelayMs;
    this.receipts.push({ dueAt, receipt: receiptFor(messageId, status, dueAt) });
    this.armReceiptTimer();
  }

  private headDueAt(): number | undefined {
    return this.receipts[this.receiptsHead]?.dueAt;
  }

  private armReceiptTimer(): void {
    if (this.receiptTimer !== undefined || this.closed) return;
    const dueAt = this.headDueAt();
    if (dueAt === undefined) return;
    this.receiptTimer = setTimeout(() => {
      this.receiptTimer = undefined;
      this.reportDueReceipts();
    }, Math.max(0, dueAt - Date.now()));
  }

  private reportDueReceipts(): void {
    const nowMs = Date.now();
    const handlers = this.handlers;
    while ((this.headDueAt() ?? Infinity) <= nowMs) {
      const due = this.receipts[this.receiptsHead++] as DueReceipt;
      if (handlers === undefined) {
        this.retryLater(due.receipt);
        continue;
      }
      this.receiptsInFlight++;
      handlers.onReceipt(due.receipt).then(
        () => this.receiptSettled(),
        (err: unknown) => {
          this.logger.warn({ err, messageId: due.receipt.messageId }, 'receipt not stored by the engine: offering it again later');
          this.retryLater(due.receipt);
          this.receiptSettled();
        },
      );
    }
    this.compactReceipts();
    this.armReceiptTimer();
    this.onReceiptsProgress?.();
  }

  private receiptSettled(): void {
    this.receiptsInFlight--;
    this.onReceiptsProgress?.();
  }

  /** Drops reported entries from the front once they are the larger half (amortised O(1) per receipt). */
  private compactReceipts(): void {
    if (this.receiptsHead > 1_024 && this.receiptsHead * 2 > this.receipts.length) {
      this.receipts = this.receipts.slice(this.receiptsHead);
      this.receiptsHead = 0;
    }
  }

  private retryLater(receipt: TransportReceipt): void {
    // After the stop its part stays 'submitted': the next start re-issues it (recoverReceipts).
    if (this.closed) return;
    // Appended at the back: its due time is now + delay, no earlier than anything queued.
    this.receipts.push({ dueAt: Date.now() + Math.max(this.config.receiptDelayMs, 100), receipt });
    this.armReceiptTimer();
  }

  private setState(state: TransportState): void {
    this.state = state;
    this.handlers?.onState(state);
  }
}

function receiptFor(messageId: string, status: string, doneAtMs: number): TransportReceipt {
  return {
    messageId,
    status,
    final: true,
    doneAt: new Date(doneAtMs).toISOString(),
    // The SMPP 3.4 Appendix B shape, so the audit trail looks like a real SMSC's.
    raw: `id:${messageId} sub:001 dlvrd:${status.startsWith('DELIV') ? '001' : '000'} stat:${status} err:000 text:`,
  };
}
