/**
 * The SMPP transport: a carrier's binds, its shared rate, and the mapping between submits and
 * part outcomes, and between deliver_sm and receipts / inbound messages.
 *
 * Window: at most `window` submit_sm await a response per bind, owned by the bound session's
 * SessionWindow (slots, deadlines, fail-all on close); a submit waits for a free slot on the
 * least-loaded bound bind (bind-choice.ts). Rate: one token bucket of maxPerSecond for the carrier, so the
 * binds share it. A bind told to slow down (ESME_RTHROTTLED / ESME_RMSGQFUL) pauses (throttle.ts)
 * and its part comes back temporary with retryAfterMs.
 */
import type { PDU } from 'smpp';
import type { Clock } from '../../common/clock.js';
import { isGatewayError } from '../../common/errors.js';
import { silentLogger, type Logger } from '../../common/log.js';
import { normalizeMessageId, parseSmppReceipt } from '../../receipts/index.js';
import type {
  LinkCounters,
  NotSentReason,
  OutboundMessage,
  PartOutcome,
  Transport,
  TransportHandlers,
  TransportLink,
  TransportReceipt,
  TransportState,
} from '../transport.js';
import { COMMAND_STATUS_CODE, commandStatusInfo, describeCommandStatus, SLOW_DOWN_STATUSES } from './command-status.js';
import { credentialsBeyondSmpp34, resolveSmppConfig, type ResolvedSmppTransportConfig, type SmppTransportConfig } from './config.js';
import { deliverSmText, isReceiptDeliverSm, receiptInput } from './deliver-sm.js';
import { isUnmarkedReceipt } from './unmarked-receipt.js';
import { chooseBind } from './bind-choice.js';
import { inboundFromDeliverSm } from './mo-user-data.js';
import { SmppBind, type BindSlot } from './smpp-bind.js';
import type { RequestResult, SmppConnection } from './smpp-connection.js';
import { planSubmits, type PlannedSubmit } from './submit-pdu.js';
import { TokenBucket } from './token-bucket.js';
import { LinkCounterTally } from '../link-counters.js';

/**
 * Which of the carrier's `binds` slots this node may open, when several nodes share them
 * (`binds` is the carrier's limit for the whole cluster). PostgreSQL's implementation holds
 * an advisory lock per slot (src/store/postgres/bind-slots.ts); without a gate every slot is this
 * process's, as for one gateway on SQLite.
 */
export interface BindSlotGate {
  /**
   * The most slots this node should hold now: its fair share of `binds` over the live nodes (0 for
   * a transport whose cluster-wide settings this node does not share; `transport` names it).
   */
  fairShare(binds: number, transport?: string): Promise<number>;
  /** Tries the free slots until this node holds maxOwned; every slot held afterwards. */
  claim(transport: string, binds: number, maxOwned: number): Promise<number[]>;
  /** Gives a slot back once its bind has closed. */
  release(transport: string, slot: number): Promise<void>;
}

export interface SmppTransportOptions {
  logger?: Logger;
  /** Cluster: open only the bind slots this gate grants (see syncSlots and dropSlots). */
  slotGate?: BindSlotGate;
  /** Randomness for reconnect jitter; Math.random by default. */
  random?: () => number;
  /** The binds' reconnect backoff sleeps on this clock (default: the system clock). */
  clock?: Clock;
}

/** Status texts of temporary and not-sent outcomes that did not come from the SMSC. */
export const LOCAL_STATUS = {
  transportDown: 'TRANSPORT_DOWN',
  transportStopped: 'TRANSPORT_STOPPED',
  responseTimeout: 'RESPONSE_TIMEOUT',
  connectionLost: 'CONNECTION_LOST',
  /** The SMSC answered the submit_sm with generic_nack (SMPP 3.4 §4.3): it could not read our PDU. */
  genericNack: 'GENERIC_NACK',
} as const;

type Waiter = () => void;

export class SmppTransport implements Transport {
  readonly type = 'smpp' as const;
  readonly name: string;
  readonly maxPerSecond: number;
  readonly config: ResolvedSmppTransportConfig;

  private readonly logger: Logger;
  /** The binds this process runs: every slot without a slot gate, the slots it holds with one. */
  private binds: SmppBind[];
  private bucket: TokenBucket;
  private readonly slotGate: BindSlotGate | undefined;
  private readonly newBind: (slot: number) => SmppBind;
  private handlers: TransportHandlers | undefined;
  private stopping = false;
  private waiters: Waiter[] = [];
  private lastState: TransportState = { state: 'binding' };
  private readonly linkTally = new LinkCounterTally();

  constructor(config: SmppTransportConfig, options: SmppTransportOptions = {}) {
    this.config = resolveSmppConfig(config);
    this.name = this.config.name;
    this.maxPerSecond = this.config.maxPerSecond;
    this.logger = (options.logger ?? silentLogger()).child({ transport: this.name });
    this.bucket = new TokenBucket(this.maxPerSecond, TokenBucket.capacityFor(this.maxPerSecond), Date.now());
    const random = options.random ?? Math.random;
    this.newBind = (slot) =>
      new SmppBind(slot, this.config, {
        logger: this.logger,
        random,
        onDeliverSm: (pdu, connection) => void this.onDeliverSm(pdu, connection),
        onSlotFreed: () => this.wakeAll(),
        onStateChange: () => this.onBindStateChange(),
        counters: this.linkTally,
        ...(options.clock === undefined ? {} : { clock: options.clock }),
      });
    this.slotGate = options.slotGate;
    this.binds = this.slotGate === undefined ? Array.from({ length: this.config.binds }, (_, slot) => this.newBind(slot)) : [];
  }

  setHandlers(handlers: TransportHandlers): void {
    this.handlers = handlers;
  }

  async start(): Promise<void> {
    const longFields = credentialsBeyondSmpp34(this.config);
    if (longFields.length > 0) {
      this.logger.warn({ fields: longFields }, 'bind credentials longer than SMPP 3.4 allows: sent as given; a strict SMSC may refuse the bind');
    }
    if (this.slotGate !== undefined) {
      await this.syncSlots();
      return;
    }
    await Promise.all(this.binds.map((bind) => bind.start()));
  }

  /**
   * Submits this transport may have in flight, as the engine's window: `window` per bind it runs
   * now. In a cluster that is the slots this node holds, not the cluster's `binds` (a node holding
   * one of two slots counted both, so a database restart that voided every node's unrecorded
   * submits re-sent up to window x binds per node, beyond the cluster's binds x window). It shrinks
   * as slots are drained or dropped, to 0 while the node holds none, and grows as it claims them.
   */
  get windowSize(): number {
    return this.config.window * (this.slotGate === undefined ? this.config.binds : this.binds.length);
  }

  /** The bind slots this process runs (every one without a slot gate). */
  heldSlots(): number[] {
    return this.binds.map((bind) => bind.index);
  }

  /**
   * Cluster: brings the binds in line with this node's fair share of the slots.
   * Over the share (another node joined), the highest slots are drained, unbound and given back
   * first; then free slots are claimed up to the share and bound. The token bucket follows: the
   * cluster's maxPerSecond split evenly over the slots, times the slots held, so the cluster as a
   * whole stays within the cap whoever holds which slot. Call it at start and whenever the live
   * nodes change (the composition root polls it). Returns the slots held.
   */
  async syncSlots(): Promise<number[]> {
    const gate = this.slotGate;
    if (gate === undefined || this.stopping) return this.heldSlots();
    const share = await gate.fairShare(this.config.binds, this.name);
    const extra = [...this.binds].sort((a, b) => b.index - a.index).slice(0, Math.max(0, this.binds.length - share));
    for (const bind of extra) {
      this.binds = this.binds.filter((b) => b !== bind);
      this.followSlotRate();
      await bind.stop(this.config.drainTimeoutMs);
      await gate.release(this.name, bind.index);
    }
    const owned = await gate.claim(this.name, this.config.binds, share);
    const fresh = owned.filter((slot) => !this.binds.some((bind) => bind.index === slot)).map((slot) => this.newBind(slot));
    this.binds = [...this.binds, ...fresh].sort((a, b) => a.index - b.index);
    this.followSlotRate();
    await Promise.all(fresh.map((bind) => bind.start()));
    this.onBindStateChange();
    return this.heldSlots();
  }

  /**
   * Cluster: the gate lost every slot at once (its database session is gone, so another node may
   * hold them already): every bind is closed now, without waiting for outstanding submits (they
   * come back not-sent and are retried), so the carrier never sees more binds than its limit.
   */
  async dropSlots(): Promise<void> {
    const dropped = this.binds;
    this.binds = [];
    this.wakeAll();
    await Promise.all(dropped.map((bind) => bind.stop(0)));
    this.onBindStateChange();
  }

  /** With a slot gate, the bucket runs at currentRatePerSecond (kept while no slot is held: no bind sends). */
  private followSlotRate(): void {
    if (this.slotGate === undefined || this.binds.length === 0) return;
    const rate = this.currentRatePerSecond();
    // syncSlots runs every beat: the bucket changes only with the rate, keeping what it holds.
    if (rate !== this.bucket.ratePerSecond) this.bucket = this.bucket.retuned(rate, Date.now());
  }

  /** Parts per second this process may send now: maxPerSecond, or its slots' share of it in a cluster. */
  currentRatePerSecond(): number {
    if (this.slotGate === undefined) return this.maxPerSecond;
    return (this.maxPerSecond * this.binds.length) / this.config.binds;
  }

  async stop(drainTimeoutMs: number = this.config.drainTimeoutMs): Promise<void> {
    this.stopping = true;
    this.wakeAll();
    await Promise.all(this.binds.map((bind) => bind.stop(drainTimeoutMs)));
  }

  currentState(): TransportState {
    return this.lastState;
  }

  /** Bind attempts, failures by reason and lost sessions over every bind this transport had (metrics). */
  linkCounters(): LinkCounters {
    return this.linkTally;
  }

  /** Bind attempts made by each bind since start (for diagnostics and tests). */
  bindAttempts(): number[] {
    return this.binds.map((bind) => bind.bindAttempts);
  }

  /** Submits awaiting a response per bind, and the binds' slow-down levels. */
  windowUsage(): { outstanding: number; slowDownLevel: number }[] {
    return this.binds.map((bind) => ({ outstanding: bind.outstanding, slowDownLevel: bind.throttle.slowDownLevel }));
  }

  links(): TransportLink[] {
    return this.binds.map((bind) => ({
      name: String(bind.index),
      state: bind.state.state,
      sinceMs: bind.stateSinceMs,
      lastError: bind.lastError,
      windowUsed: bind.outstanding,
      windowSize: this.config.window,
    }));
  }

  submit(message: OutboundMessage): Promise<PartOutcome[]> {
    if (this.stopping) return Promise.resolve(requestedParts(message).map((part) => notSent(part, 'TRANSPORT_STOPPED')));
    const plan = planSubmits(message, this.config);
    if (!plan.ok) {
      this.logger.warn({ messageKey: message.messageKey, status: plan.status }, plan.detail);
      return Promise.resolve(requestedParts(message).map((part): PartOutcome => ({ part, kind: 'permanent', status: plan.status })));
    }
    if (!this.anyBindBound()) {
      return Promise.resolve(requestedParts(message).map((part) => notSent(part, 'TRANSPORT_DOWN')));
    }
    // Hot path (one PDU, a slot and a token free now): one promise, no async hop.
    if (plan.submits.length === 1) {
      const slot = this.acquireNow();
      if (slot !== null) return this.send(plan.submits[0]!, slot);
    }
    return this.submitEach(plan.submits, message.mayStillSend);
  }

  /**
   * Several PDUs, or waiting for a slot or a token: each PDU in order as binds allow. After a wait
   * the engine is asked again whether the message may still go (OutboundMessage.mayStillSend: a
   * cluster node frozen while its submits waited here must not send what its peers sent meanwhile).
   */
  private async submitEach(submits: readonly PlannedSubmit[], mayStillSend: (() => boolean) | undefined): Promise<PartOutcome[]> {
    const pending: Promise<PartOutcome[]>[] = [];
    for (const planned of submits) {
      const slot = this.acquireNow() ?? (await this.acquireSlot());
      if (slot === null) {
        const reason = this.stopping ? 'TRANSPORT_STOPPED' : 'TRANSPORT_DOWN';
        pending.push(Promise.resolve(planned.parts.map((part) => notSent(part, reason))));
        continue;
      }
      if (mayStillSend !== undefined && !mayStillSend()) {
        slot.bind.release(slot);
        pending.push(Promise.resolve(planned.parts.map((part) => notSent(part, 'LEASE_LAPSED'))));
        continue;
      }
      pending.push(this.send(planned, slot));
    }
    return (await Promise.all(pending)).flat();
  }

  /** Sends one planned PDU on a slot already reserved. */
  private send(planned: PlannedSubmit, slot: BindSlot): Promise<PartOutcome[]> {
    return new Promise<PartOutcome[]>((resolve) => slot.bind.submit(slot, planned.pdu, (result) => resolve(this.outcomes(planned, slot.bind, result))));
  }

  private anyBindBound(): boolean {
    for (const bind of this.binds) if (bind.state.state === 'bound') return true;
    return false;
  }

  /** A slot on the least-loaded bind and a rate token, taken now; null if either must be waited for. */
  private acquireNow(): BindSlot | null {
    if (this.stopping || this.waiters.length > 0) return null;
    const nowMs = Date.now();
    const choice = chooseBind(this.binds, nowMs);
    if (choice.kind !== 'bind' || this.bucket.take(nowMs) > 0) return null;
    return choice.bind.reserve();
  }

  private outcomes(planned: PlannedSubmit, bind: SmppBind, result: RequestResult): PartOutcome[] {
    if (result.kind === 'failed') {
      // The PDU went to (or was meant for) the wire: the SMSC may have it, so this is a temporary
      // failure that spends an attempt, never 'not-sent' (the engine holds it anyway while stopping).
      return planned.parts.map((part) => temporary(part, result.code));
    }
    const commandStatus = result.pdu.command_status;
    if (result.pdu.command === 'generic_nack' && !SLOW_DOWN_STATUSES.has(commandStatus)) {
      // SMPP 3.4 §4.3: the SMSC could not read our submit_sm, whatever its content. Nothing says
      // the message is bad, so the part is retried; the link stays up.
      this.logger.warn({ bind: bind.index, commandStatus: describeCommandStatus(commandStatus) }, 'submit_sm answered with generic_nack');
      return planned.parts.map((part) => ({ part, kind: 'temporary', status: LOCAL_STATUS.genericNack, errorCode: commandStatus }));
    }
    if (commandStatus === COMMAND_STATUS_CODE.ESME_ROK) {
      bind.throttle.onAccepted();
      const rawId = typeof result.pdu['message_id'] === 'string' ? result.pdu['message_id'] : '';
      // The same normalisation as receipts get (normalizeMessageId), so early receipts match.
      const messageId = normalizeMessageId(rawId, 'as-is');
      if (messageId === '') {
        // SMPP 3.4 §4.4.2 makes message_id mandatory, but the SMSC said ESME_ROK: it has the
        // message, so resending would duplicate it. Accepted with an empty id; no receipt can match.
        this.logger.warn({ bind: bind.index, parts: planned.parts }, 'submit_sm_resp OK without a message_id: accepted, its receipt cannot be matched');
      }
      return planned.parts.map((part) => ({ part, kind: 'accepted', messageId }));
    }
    const info = commandStatusInfo(commandStatus);
    if (SLOW_DOWN_STATUSES.has(commandStatus)) {
      const retryAfterMs = bind.throttle.onSlowDown(Date.now());
      this.logger.info({ bind: bind.index, status: info.name, pauseMs: retryAfterMs }, 'SMSC asked to slow down');
      setTimeout(() => this.wakeAll(), retryAfterMs).unref();
      return planned.parts.map((part) => ({ part, kind: 'temporary', status: info.name, errorCode: commandStatus, retryAfterMs }));
    }
    if (info.kind === 'temporary') {
      return planned.parts.map((part) => ({ part, kind: 'temporary', status: info.name, errorCode: commandStatus }));
    }
    return planned.parts.map((part) => ({ part, kind: 'permanent', status: info.name, errorCode: commandStatus }));
  }

  /**
   * A window slot on the least-loaded bound, unpaused bind (chooseBind), then a rate token. Null
   * when no bind is bound or the transport is stopping.
   */
  private async acquireSlot(): Promise<BindSlot | null> {
    let slot: BindSlot | null = null;
    while (slot === null) {
      if (this.stopping) return null;
      const choice = chooseBind(this.binds, Date.now());
      if (choice.kind === 'none') return null;
      if (choice.kind === 'bind') slot = choice.bind.reserve();
      else await this.waitForChange(choice.pauseMs);
    }
    for (let waitMs = this.bucket.take(Date.now()); waitMs > 0; waitMs = this.bucket.take(Date.now())) {
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      if (this.stopping || slot.window.isClosed) {
        slot.bind.release(slot);
        return this.stopping ? null : this.acquireSlot();
      }
    }
    return slot;
  }

  private waitForChange(timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        resolve();
      };
      if (Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => {
          this.waiters = this.waiters.filter((other) => other !== waiter);
          resolve();
        }, timeoutMs);
      }
      this.waiters.push(waiter);
    });
  }

  /**
   * Every waiter re-checks in arrival order. Waiters exist only while every slot is taken (the
   * engine's concurrency is windowSize), so there are few of them.
   */
  private wakeAll(): void {
    if (this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  private onBindStateChange(): void {
    // Waiters re-check: a bind came up (slots to use) or went down (maybe none left at all).
    this.wakeAll();
    const state = this.aggregateState();
    if (sameState(state, this.lastState)) return;
    this.lastState = state;
    this.logger.info({ state }, 'transport state');
    this.handlers?.onState(state);
  }

  private aggregateState(): TransportState {
    const bound = this.binds.filter((bind) => bind.state.state === 'bound').length;
    if (bound > 0) return { state: 'bound', detail: `${bound}/${this.binds.length} binds bound` };
    if (this.binds.some((bind) => bind.state.state === 'binding')) return { state: 'binding' };
    if (this.binds.length === 0 && this.slotGate !== undefined) return { state: 'down', reason: 'no bind slot held: the cluster\'s binds are held by other nodes' };
    const reasons = [...new Set(this.binds.map((bind) => (bind.state.state === 'down' ? bind.state.reason : '')))];
    return { state: 'down', reason: reasons.filter((reason) => reason !== '').join('; ') || 'down' };
  }

  private async onDeliverSm(pdu: PDU, connection: SmppConnection): Promise<void> {
    const handlers = this.handlers;
    if (handlers === undefined) {
      // Not acknowledged: the SMSC keeps it and retries (ESME_RX_T_APPN, SMPP 3.4 §5.1.3).
      connection.respond(pdu, COMMAND_STATUS_CODE.ESME_RX_T_APPN);
      return;
    }
    if (isReceiptDeliverSm(pdu) || (await isUnmarkedReceipt(pdu, handlers, this.config.messageIdFormat))) {
      await this.handleReceipt(pdu, connection, handlers);
      return;
    }
    const message = inboundFromDeliverSm(pdu, deliverSmText(pdu, 'inbound'), new Date().toISOString(), (note) => {
      // Text is not logged (STYLE 12): what was done to it, and to how many octets.
      this.logger.warn({ source_addr: pdu['source_addr'], note }, note.kind === 'udh-unreadable' ? 'MO user data header unreadable; read as text without a header' : 'MO GSM-7 octets above 0x7F; top bit masked');
    });
    try {
      await handlers.onInbound(message);
      connection.respond(pdu);
    } catch (err) {
      // A part over the inbound bounds is summarised by the inbound service, not logged per PDU (a flood would flood the log).
      if (isGatewayError(err, 'INBOUND_PARTS_LIMIT')) this.logger.debug({ err: errorMessage(err) }, 'inbound part refused; asking the SMSC to retry later');
      else this.logger.warn({ err: errorMessage(err) }, 'inbound handler failed; asking the SMSC to retry');
      connection.respond(pdu, COMMAND_STATUS_CODE.ESME_RX_T_APPN);
    }
  }

  private async handleReceipt(pdu: PDU, connection: SmppConnection, handlers: TransportHandlers): Promise<void> {
    const parsed = parseSmppReceipt(receiptInput(pdu), this.config.messageIdFormat);
    if (!parsed.ok) {
      // No id means it can never be matched; a retry would bring the same text. Refuse it
      // permanently (ESME_RX_P_APPN) and log it whole so it is not lost silently.
      this.logger.warn({ receipt: withoutMessageText(parsed.raw), reason: parsed.reason }, 'receipt without a message id refused');
      connection.respond(pdu, COMMAND_STATUS_CODE.ESME_RX_P_APPN);
      return;
    }
    // The parsed receipt goes on as it is (no copy a receipt); only the rare cut status is copied without its note.
    let receipt: TransportReceipt = parsed.receipt;
    const { truncatedFromChars } = parsed.receipt;
    if (truncatedFromChars !== undefined) {
      this.logger.warn(
        { messageId: parsed.receipt.messageId, truncatedFromChars, receipt: withoutMessageText(parsed.receipt.raw) },
        'receipt status cut to 30 characters',
      );
      const { truncatedFromChars: _cut, ...fields } = parsed.receipt;
      receipt = fields;
    }
    try {
      await handlers.onReceipt(receipt);
      connection.respond(pdu);
    } catch (err) {
      this.logger.warn({ messageId: receipt.messageId, err: errorMessage(err) }, 'receipt not stored; asking the SMSC to retry');
      connection.respond(pdu, COMMAND_STATUS_CODE.ESME_RX_T_APPN);
    }
  }
}

/** Receipt text for logs: the `text:` field quotes the message, which is logged only when configured (STYLE 12). */
function withoutMessageText(raw: string): string {
  const at = raw.search(/(^|\s)text\s*:/i);
  return at < 0 ? raw : `${raw.slice(0, at)} text:[not logged]`;
}

function requestedParts(message: OutboundMessage): readonly number[] {
  return message.partNumbers ?? message.segments.map((_, index) => index + 1);
}

function temporary(part: number, status: string): PartOutcome {
  return { part, kind: 'temporary', status };
}

function notSent(part: number, reason: NotSentReason): PartOutcome {
  return { part, kind: 'not-sent', reason };
}

function sameState(a: TransportState, b: TransportState): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
