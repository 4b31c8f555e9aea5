/**
 * An SMSC for end-to-end tests and benches: the test SMSC (test/support/smsc) answering every
 * submit_sm with a new id, then sending one receipt per accepted part with a status chosen by the
 * destination (e.g. numbers ending in 9 are UNDELIV). Like a real SMSC it stores each receipt
 * until a deliver_sm_resp with status 0 acknowledges it, and offers it again later (after a
 * reconnect, say), so a gateway killed mid-run still gets every receipt once it binds again.
 */
import { TestSmsc } from './smsc/test-smsc.js';

export interface ReceiptingSmscOptions {
  systemId?: string;
  password?: string;
  /** Receipt status for a destination; default: DELIVRD. */
  statusFor?: (destination: string) => string;
  /**
   * The submit_sm_resp command_status for a destination; default 0 (accepted). A part refused
   * (non-zero) gets no message id and no receipt, and is not counted in acceptedByDestination.
   */
  submitStatusFor?: (destination: string) => number;
  /** Wait before a part's receipt is first offered. */
  receiptDelayMs?: number;
  /** deliver_sm awaiting their response at once. */
  receiptWindow?: number;
  /** Keep per-destination submit counts (tests); benches turn it off. */
  countByDestination?: boolean;
  /** Called on every submit_sm accepted (the e2e bench timestamps each stage with it). */
  onSubmitted?: (destination: string) => void;
  /** Called when a receipt's deliver_sm_resp with status 0 arrives: the gateway has stored it. */
  onReceiptAcknowledged?: (messageId: string, destination: string) => void;
}

interface StoredReceipt {
  messageId: string;
  destination: string;
  stat: string;
  dueAt: number;
}

export class ReceiptingSmsc {
  /** submit_sm received per destination (when countByDestination). */
  readonly submitsByDestination = new Map<string, number>();
  /** submit_sm accepted (command_status 0) per destination (when countByDestination). */
  readonly acceptedByDestination = new Map<string, number>();
  receiptsAcknowledged = 0;
  /** FIFO of receipts to offer; `head` avoids Array.shift's O(n) on 100k entries. */
  private queue: StoredReceipt[] = [];
  private head = 0;
  private inFlight = 0;
  private nextId = 1;
  private pump: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly seenSessions = new Set<number>();

  private constructor(
    readonly smsc: TestSmsc,
    private readonly options: Required<ReceiptingSmscOptions>,
  ) {}

  static async start(options: ReceiptingSmscOptions = {}): Promise<ReceiptingSmsc> {
    const resolved: Required<ReceiptingSmscOptions> = {
      systemId: options.systemId ?? 'esme',
      password: options.password ?? 'secret',
      statusFor: options.statusFor ?? (() => 'DELIVRD'),
      submitStatusFor: options.submitStatusFor ?? (() => 0),
      receiptDelayMs: options.receiptDelayMs ?? 0,
      receiptWindow: options.receiptWindow ?? 64,
      countByDestination: options.countByDestination ?? true,
      onSubmitted: options.onSubmitted ?? (() => undefined),
      onReceiptAcknowledged: options.onReceiptAcknowledged ?? (() => undefined),
    };
    let self: ReceiptingSmsc | undefined;
    const smsc = await TestSmsc.start({
      systemId: resolved.systemId,
      password: resolved.password,
      // Decoding every submit is needed to read its destination.
      record: true,
      onSubmit: (submit) => self?.onSubmit(submit.wire.destination_addr) ?? { kind: 'status', commandStatus: 0x08 },
    });
    self = new ReceiptingSmsc(smsc, resolved);
    self.pump = setInterval(() => self?.offer(), 2);
    return self;
  }

  get address(): { host: string; port: number } {
    return this.smsc.address;
  }

  get submitCount(): number {
    return this.smsc.submitCount;
  }

  /** Receipts not yet acknowledged by the gateway. */
  get receiptsOutstanding(): number {
    return this.queue.length - this.head + this.inFlight;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pump);
    await this.smsc.stop();
  }

  private onSubmit(destination: string): { kind: 'ok'; messageId: string } | { kind: 'status'; commandStatus: number } {
    if (this.options.countByDestination) this.submitsByDestination.set(destination, (this.submitsByDestination.get(destination) ?? 0) + 1);
    // The test SMSC's recording would grow by one decoded submit per part; keep only counts.
    this.smsc.submits.length = 0;
    this.smsc.received.length = 0;
    const commandStatus = this.options.submitStatusFor(destination);
    if (commandStatus !== 0) return { kind: 'status', commandStatus };
    if (this.options.countByDestination) this.acceptedByDestination.set(destination, (this.acceptedByDestination.get(destination) ?? 0) + 1);
    const messageId = String(this.nextId++);
    this.options.onSubmitted(destination);
    this.queue.push({ messageId, destination, stat: this.options.statusFor(destination), dueAt: Date.now() + this.options.receiptDelayMs });
    return { kind: 'ok', messageId };
  }

  private offer(): void {
    const now = Date.now();
    const sessions = this.smsc.boundSessions();
    if (sessions.length === 0) return;
    for (const { id } of sessions) {
      if (this.seenSessions.has(id)) continue;
      this.seenSessions.add(id);
      // The test SMSC adds one 'close' listener per deliver_sm awaiting its response; with a
      // receipt window of 64 that is expected, not a leak.
      this.smsc.socketOf(id).setMaxListeners(this.options.receiptWindow + 16);
    }
    while (!this.stopped && this.inFlight < this.options.receiptWindow && this.head < this.queue.length && (this.queue[this.head]?.dueAt ?? Infinity) <= now) {
      const receipt = this.queue[this.head++] as StoredReceipt;
      if (this.head > 4_096 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.inFlight++;
      this.smsc.sendReceipt(receipt.messageId, { stat: receipt.stat }, receipt.destination).then(
        (status) => this.settle(receipt, status === 0),
        () => this.settle(receipt, false),
      );
    }
  }

  private settle(receipt: StoredReceipt, acknowledged: boolean): void {
    this.inFlight--;
    if (acknowledged) {
      this.receiptsAcknowledged++;
      this.options.onReceiptAcknowledged(receipt.messageId, receipt.destination);
      return;
    }
    // Not acknowledged (connection lost, or the ESME answered with an error): offer it again later.
    this.queue.push({ ...receipt, dueAt: Date.now() + 200 });
  }
}
