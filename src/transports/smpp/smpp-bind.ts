/**
 * One of a carrier's binds: a transceiver connection, or a transmitter plus a receiver connection
 * treated as one unit (if either drops, both are closed and rebound together). Keeps itself bound:
 * after a lost connection it waits nextReconnectDelayMs and binds again, and after the SMSC
 * refused the credentials it waits far longer (authFailurePolicy) so a wrong password never
 * becomes a retry storm.
 */
import type { PDU } from 'smpp';
import { BackgroundWorker, type PassResult } from '../../common/background-worker.js';
import type { Clock } from '../../common/clock.js';
import { isGatewayError } from '../../common/errors.js';
import type { Logger } from '../../common/log.js';
import type { ResolvedSmppTransportConfig } from './config.js';
import { authFailurePolicy, nextReconnectDelayMs, type BackoffPolicy } from './reconnect.js';
import { requestFailure, type ResultCallback, type SessionWindow } from './session-window.js';
import { SmppConnection, type BindCommand } from './smpp-connection.js';
import type { LinkCounterTally } from '../link-counters.js';
import { BindThrottle } from './throttle.js';

export type BindState = { state: 'binding' } | { state: 'bound' } | { state: 'down'; reason: string };

/** A submit slot taken on one session's window of a bind (reserve()); sent with submit() or given back with release(). */
export interface BindSlot {
  readonly bind: SmppBind;
  readonly window: SessionWindow;
}

export interface SmppBindDeps {
  logger: Logger;
  random(): number;
  onDeliverSm(pdu: PDU, connection: SmppConnection): void;
  /** A window slot was freed: the transport re-checks its waiting submits. */
  onSlotFreed(): void;
  /** The bind's state changed. */
  onStateChange(): void;
  /** The reconnect backoff sleeps on this clock (default: the system clock). */
  clock?: Clock;
  /** The transport's counts of bind attempts, failures and lost sessions (metrics). */
  counters?: LinkCounterTally;
}

export class SmppBind {
  readonly throttle = new BindThrottle();
  private bindState: BindState = { state: 'binding' };
  private connections: SmppConnection[] = [];
  private transmitter: SmppConnection | undefined;
  private stopped = false;
  /** The bind loop: one pass binds and holds the session until it is lost; it then sleeps nextDelayMs. */
  private readonly worker: BackgroundWorker;
  private started = false;
  private firstAttemptDone: () => void = () => undefined;
  private attempt = 0;
  private authFailures = 0;
  private nextDelayMs = 0;
  private connectionLost: (() => void) | undefined;
  private lastCloseReason = '';
  private drainWaiters: (() => void)[] = [];
  /** Bind attempts made (for state details and tests). */
  bindAttempts = 0;
  /** When the bind entered its state, and the last reason it went down (admin status page). */
  stateSinceMs = Date.now();
  lastError: string | null = null;

  constructor(
    readonly index: number,
    private readonly config: ResolvedSmppTransportConfig,
    private readonly deps: SmppBindDeps,
  ) {
    this.worker = new BackgroundWorker({
      intervalMs: () => this.nextDelayMs,
      pass: () => this.bindPass(),
      onError: (err) => this.deps.logger.error({ err, bind: this.index }, 'bind loop pass failed'),
      ...(deps.clock === undefined ? {} : { clock: deps.clock }),
    });
  }

  get state(): BindState {
    return this.bindState;
  }

  /** Window slots in use on the bound session: reserved for a submit about to be sent, or awaiting its response. */
  get outstanding(): number {
    return this.transmitter?.window.slotsUsed ?? 0;
  }

  /** Bound, and its session's window has a free slot. */
  get hasFreeSlot(): boolean {
    return this.bindState.state === 'bound' && this.transmitter !== undefined && this.transmitter.window.hasFreeSlot;
  }

  /** Starts the bind loop; resolves after the first bind attempt, bound or not. */
  start(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.firstAttemptDone = resolve;
      this.started = true;
      this.worker.start();
    });
  }

  /** Takes a slot on the bound session's window; null when not bound or full. Then submit() or release(). */
  reserve(): BindSlot | null {
    const window = this.bindState.state === 'bound' ? this.transmitter?.window : undefined;
    if (window === undefined || !window.reserve()) return null;
    return { bind: this, window };
  }

  release(slot: BindSlot): void {
    slot.window.unreserve();
  }

  /**
   * Sends an encoded submit_sm (encodeSubmitSm) on a reserved slot; onResult is called once, the
   * slot freed first. A slot of a session that has since closed fails with CONNECTION_LOST.
   */
  submit(slot: BindSlot, pdu: Buffer, onResult: ResultCallback): void {
    const connection = this.transmitter;
    if (connection === undefined || connection.window !== slot.window || this.bindState.state !== 'bound') {
      slot.window.unreserve();
      onResult(requestFailure('CONNECTION_LOST'));
      return;
    }
    connection.sendSubmitSm(pdu, onResult);
  }

  private onSlotFreed(): void {
    if (this.outstanding === 0) this.notifyDrained();
    this.deps.onSlotFreed();
  }

  /**
   * Stops rebinding, waits up to drainTimeoutMs for outstanding submits, then unbinds every
   * connection (each waits at most responseTimeoutMs for unbind_resp). Anything still pending
   * fails with TRANSPORT_STOPPED.
   */
  async stop(drainTimeoutMs: number): Promise<void> {
    this.stopped = true;
    // Ends the reconnect sleep now; settles when the pass holding the session has returned.
    const loopEnded = this.worker.stop();
    if (this.outstanding > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, drainTimeoutMs);
        this.drainWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    await Promise.all(this.connections.map((connection) => connection.unbindAndClose()));
    this.connectionLost?.();
    await loopEnded;
    if (!this.started) return;
    this.setState({ state: 'down', reason: 'stopped' });
    this.firstAttemptDone();
  }

  private notifyDrained(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const waiter of waiters) waiter();
  }

  private setState(state: BindState): void {
    if (state.state !== this.bindState.state) this.stateSinceMs = Date.now();
    if (state.state === 'down' && state.reason !== 'stopped') this.lastError = state.reason;
    this.bindState = state;
    this.deps.onStateChange();
  }

  /** Binds, holds the session until it is lost, and sets the backoff before the next bind (nextReconnectDelayMs). */
  private async bindPass(): Promise<PassResult> {
    if (this.stopped) return 'idle';
    this.setState({ state: 'binding' });
    try {
      await this.bindAll();
      if (this.stopped) return 'idle';
      this.attempt = 0;
      this.authFailures = 0;
      this.setState({ state: 'bound' });
      this.firstAttemptDone();
      const reason = await this.waitForConnectionLoss();
      if (this.stopped) return 'idle';
      this.deps.counters?.lost();
      this.setState({ state: 'down', reason: `connection lost: ${reason}` });
      this.nextDelayMs = nextReconnectDelayMs(this.attempt++, this.deps.random(), this.config.reconnect);
    } catch (err) {
      this.deps.counters?.failed(err);
      const refused = isGatewayError(err, 'SMPP_BIND_REFUSED');
      const policy: BackoffPolicy = refused ? authFailurePolicy(this.config.reconnect) : this.config.reconnect;
      this.nextDelayMs = nextReconnectDelayMs(refused ? this.authFailures++ : this.attempt++, this.deps.random(), policy);
      const message = err instanceof Error ? err.message : String(err);
      this.deps.logger.warn({ bind: this.index, retryInMs: this.nextDelayMs }, message);
      this.setState({ state: 'down', reason: `${message}; retry in ${Math.round(this.nextDelayMs / 1000)} s` });
      this.firstAttemptDone();
    }
    return 'idle';
  }

  private async bindAll(): Promise<void> {
    this.bindAttempts++;
    this.deps.counters?.attempted();
    const commands: BindCommand[] =
      this.config.bindMode === 'transceiver' ? ['bind_transceiver'] : ['bind_transmitter', 'bind_receiver'];
    this.lastCloseReason = '';
    const opened = await Promise.allSettled(commands.map((command) => this.openConnection(command)));
    const connections = opened.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failure = opened.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failure !== undefined || this.stopped) {
      for (const connection of connections) connection.destroy('BIND_INCOMPLETE');
      if (failure !== undefined) throw failure.reason;
      return;
    }
    this.connections = connections;
    this.transmitter = connections[0];
    this.deps.logger.info({ bind: this.index, mode: this.config.bindMode }, 'bound');
  }

  private openConnection(bindCommand: BindCommand): Promise<SmppConnection> {
    return SmppConnection.open({
      host: this.config.host,
      port: this.config.port,
      tls: this.config.tls,
      tlsRejectUnauthorized: this.config.tlsRejectUnauthorized,
      systemId: this.config.systemId,
      password: this.config.password,
      systemType: this.config.systemType,
      bindCommand,
      responseTimeoutMs: this.config.responseTimeoutMs,
      windowSlots: this.config.window,
      enquireLinkIntervalMs: this.config.enquireLinkIntervalMs,
      logger: this.deps.logger.child({ bind: this.index, connection: bindCommand }),
      onDeliverSm: this.deps.onDeliverSm,
      onClosed: (reason) => this.onConnectionClosed(reason),
      onSlotFreed: () => this.onSlotFreed(),
    });
  }

  private onConnectionClosed(reason: string): void {
    if (this.lastCloseReason === '') this.lastCloseReason = reason;
    // A transmitter-receiver pair is one bind: losing either half closes the other.
    for (const connection of this.connections) connection.destroy(reason);
    this.connectionLost?.();
  }

  private waitForConnectionLoss(): Promise<string> {
    return new Promise<string>((resolve) => {
      const done = (): void => {
        this.connectionLost = undefined;
        this.connections = [];
        this.transmitter = undefined;
        resolve(this.lastCloseReason);
      };
      if (this.connections.some((connection) => !connection.isOpen) || this.stopped) {
        done();
        return;
      }
      this.connectionLost = done;
    });
  }
}
