/**
 * One modem of a transport's pool: opens the serial port, initialises the modem, takes parts from
 * the shared queue at the profile's rate, polls health, and when the port closes or errors (USB
 * unplug) reopens it with backoff and initialises again. A part it holds when the link drops goes
 * back to the queue if nothing was sent (another device takes it, within the same engine attempt),
 * or comes back 'temporary' (RESULT_UNKNOWN) if the PDU was already written. A part that reached
 * the modem is never sent again here: the engine alone retries (transport.ts, PartOutcome).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { BackgroundWorker, type PassResult } from '../../common/background-worker.js';
import { sleep, type Clock, type ClockTimer } from '../../common/clock.js';
import { isGatewayError } from '../../common/errors.js';
import type { DecodedDeliver, DecodedStatusReport } from '../../pdu/index.js';
import type { PartOutcome } from '../transport.js';
import { AtChannel } from './at-channel.js';
import { type ModemHealth, ModemSession, type SendResult, type UndecodableReason } from './modem-session.js';
import type { PartQueue, QueuedPart } from './part-queue.js';
import type { ModemProfile } from './profile.js';
import { closeSerialPort, type ModemPort, openSerialPort, type SerialBinding } from './serial-port.js';

export type DeviceState = 'opening' | 'initialising' | 'ready' | 'down' | 'stopped';

export interface DeviceWorkerOptions {
  name: string;
  path: string;
  profile: ModemProfile;
  baudRate: number;
  messagesPerMinute: number;
  pin: string | undefined;
  smsc: string | undefined;
  registrationTimeoutMs: number;
  registrationPollMs: number;
  healthIntervalMs: number;
  reopenBackoffMs: readonly number[];
  /** How the port is opened: the OS's serial ports, or a mock binding in unit tests. */
  binding: SerialBinding;
  /** Every time this worker reads or waits for (pacing, reopen backoff, health polls, AT deadlines). */
  clock: Clock;
  /** The least delay before the engine retries a part this modem refused temporarily. */
  retryDelayMs: number;
  queue: PartQueue;
  logger: Logger;
  /** Called with every accepted part before its outcome resolves, so the receipt key exists first. */
  onAccepted(device: string, messageReference: number, destination: string, messageId: string): void;
  onStatusReport(device: string, report: DecodedStatusReport, hex: string): Promise<void>;
  onInbound(device: string, message: DecodedDeliver, hex: string): Promise<void>;
  onUndecodable(device: string, hex: string, reason: UndecodableReason): Promise<void>;
  onStateChange(device: string, state: DeviceState, reason?: string): void;
}

export interface DeviceStatus {
  name: string;
  path: string;
  profile: string;
  state: DeviceState;
  health: ModemHealth | null;
  sent: number;
  lastError: string | null;
  /** When the device entered its state (ms since epoch), for the admin status page. */
  sinceMs: number;
  /** The last +CMS ERROR a part got ('CMS_ERROR_332'), null when none. */
  lastCmsError: string | null;
  /** A part is being sent now. */
  sending: boolean;
}

export class DeviceWorker {
  private stateValue: DeviceState = 'down';
  private stopping = false;
  private port: ModemPort | null = null;
  private channel: AtChannel | null = null;
  private session: ModemSession | null = null;
  private nextSlotMs = 0;
  private inFlight: Promise<void> | null = null;
  /** The open / init / send cycle: one pass per link, then the reopen backoff (nextDelayMs). */
  private readonly lifecycle: BackgroundWorker;
  private firstAttempt: () => void = () => undefined;
  private failures = 0;
  private nextDelayMs = 0;
  private healthTimer: ClockTimer | null = null;
  private healthValue: ModemHealth | null = null;
  private sentCount = 0;
  private lastError: string | null = null;
  private lastCmsError: string | null = null;
  private stateSinceMs: number;
  private pinRefused = false;

  constructor(private readonly options: DeviceWorkerOptions) {
    this.stateSinceMs = options.clock.now();
    this.lifecycle = new BackgroundWorker({
      intervalMs: () => this.nextDelayMs,
      pass: () => this.lifecyclePass(),
      onError: (err) => this.options.logger.error({ err, path: this.options.path }, 'modem lifecycle pass failed'),
      clock: options.clock,
    });
  }

  get name(): string {
    return this.options.name;
  }

  get state(): DeviceState {
    return this.stateValue;
  }

  get messagesPerMinute(): number {
    return this.options.messagesPerMinute;
  }

  status(): DeviceStatus {
    return {
      name: this.options.name,
      path: this.options.path,
      profile: this.options.profile.name,
      state: this.stateValue,
      health: this.healthValue,
      sent: this.sentCount,
      lastError: this.lastError,
      sinceMs: this.stateSinceMs,
      lastCmsError: this.lastCmsError,
      sending: this.inFlight !== null,
    };
  }

  /** Starts the open / init / send cycle; resolves after the first attempt to come up. */
  start(): Promise<void> {
    const attempted = new Promise<void>((resolve) => {
      this.firstAttempt = resolve;
    });
    this.lifecycle.start();
    return attempted;
  }

  /** Stops taking parts, waits up to drainTimeoutMs for the send in flight, then closes the port. */
  async stop(drainTimeoutMs: number): Promise<void> {
    this.stopping = true;
    this.options.queue.wake();
    // Ends the reopen backoff now; settles once the pass holding the link has returned.
    const lifecycleEnded = this.lifecycle.stop();
    if (this.inFlight !== null) await Promise.race([this.inFlight, sleep(this.options.clock, drainTimeoutMs)]);
    this.closePort('stopped');
    await lifecycleEnded;
    this.setState('stopped');
  }

  private setState(state: DeviceState, reason?: string): void {
    if (this.stateValue === state) return;
    this.stateValue = state;
    this.stateSinceMs = this.options.clock.now();
    this.options.onStateChange(this.options.name, state, reason);
  }

  /** One link: open, initialise, send until it drops; then sets the reopen backoff (reopenBackoffMs). */
  private async lifecyclePass(): Promise<PassResult> {
    const firstAttempt = this.firstAttempt;
    // The worker starts no pass after stop(); the guard keeps the loop's old shape.
    if (!this.stopping) {
      try {
        this.setState('opening');
        const { closed } = await this.open();
        this.setState('initialising');
        await this.session?.init();
        this.setState('ready');
        this.failures = 0;
        this.lastError = null;
        firstAttempt();
        this.startHealth();
        void this.session?.drainStored().catch((err: unknown) => this.options.logger.warn({ err }, 'reading stored messages failed'));
        await Promise.race([this.sendLoop(), closed]);
      } catch (err) {
        if (isGatewayError(err, 'MODEM_SIM_PIN_REJECTED')) {
          // Never try a refused PIN again: three wrong tries lock the SIM behind its PUK.
          this.pinRefused = true;
          this.options.logger.error({ path: this.options.path }, 'the SIM refused the configured PIN; not trying it again until restart');
        }
        this.lastError = isGatewayError(err) ? err.code : err instanceof Error ? err.message : String(err);
        this.options.logger.warn({ err: this.lastError, path: this.options.path }, 'modem not available');
      }
      firstAttempt();
      this.stopHealth();
      this.closePort(this.lastError ?? 'link lost');
      if (this.inFlight !== null) await this.inFlight;
      if (this.stopping) return 'idle';
      this.setState('down', this.lastError ?? 'link lost');
      const backoff = this.options.reopenBackoffMs;
      this.nextDelayMs = backoff[Math.min(this.failures, backoff.length - 1)] ?? 1_000;
      this.failures++;
    }
    return 'idle';
  }

  /** Opens the port and wires it to a new channel and session; `closed` settles when the link drops. */
  private async open(): Promise<{ closed: Promise<void> }> {
    const port = await openSerialPort(this.options.binding, this.options.path, this.options.baudRate);
    let markClosed!: () => void;
    const closed = new Promise<void>((resolve) => {
      markClosed = resolve;
    });
    const channel = new AtChannel(
      { write: (data) => port.write(Buffer.from(data, 'latin1')) },
      {
        onUrc: (urc) => void this.session?.handleUrc(urc),
        onStray: (text) => this.options.logger.debug({ line: text }, 'unexpected line from the modem'),
        clock: this.options.clock,
      },
    );
    const lost = (reason: string): void => {
      if (!channel.closed) {
        this.lastError = reason;
        channel.close(reason);
      }
      markClosed();
    };
    port.on('data', (chunk: Buffer) => channel.receive(chunk));
    port.on('close', () => lost('port closed'));
    port.on('error', (err: Error) => lost(`port error: ${err.message}`));
    this.port = port;
    this.channel = channel;
    this.session = new ModemSession(channel, {
      profile: this.options.profile,
      pin: this.pinRefused ? undefined : this.options.pin,
      smsc: this.options.smsc,
      registrationTimeoutMs: this.options.registrationTimeoutMs,
      registrationPollMs: this.options.registrationPollMs,
      clock: this.options.clock,
      logger: this.options.logger,
      handlers: {
        onStatusReport: (report, hex) => this.options.onStatusReport(this.options.name, report, hex),
        onInbound: (message, hex) => this.options.onInbound(this.options.name, message, hex),
        onUndecodable: (hex, reason) => this.options.onUndecodable(this.options.name, hex, reason),
      },
    });
    return { closed };
  }

  private closePort(reason: string): void {
    this.channel?.close(reason);
    const port = this.port;
    this.port = null;
    if (port !== null) void closeSerialPort(port);
    this.options.queue.wake();
  }

  private startHealth(): void {
    const poll = async (): Promise<void> => {
      try {
        this.healthValue = (await this.session?.health()) ?? null;
        this.options.logger.info({ ...this.healthValue, path: this.options.path }, 'modem health');
      } catch (err) {
        if (isGatewayError(err, 'AT_TIMEOUT')) {
          // A modem that stops answering is treated like an unplug: reopen and initialise again.
          this.options.logger.warn({ path: this.options.path }, 'modem stopped answering; reopening');
          this.closePort('not answering');
        }
      }
    };
    const every = (): void => {
      this.healthTimer = this.options.clock.setTimer(() => {
        every();
        void poll();
      }, this.options.healthIntervalMs);
    };
    void poll();
    every();
  }

  private stopHealth(): void {
    if (this.healthTimer !== null) this.options.clock.clearTimer(this.healthTimer);
    this.healthTimer = null;
  }

  /** Sends until this link closes; bound to the link it started on, so a reopen never runs two loops. */
  private async sendLoop(): Promise<void> {
    const intervalMs = 60_000 / this.options.messagesPerMinute;
    const queue = this.options.queue;
    const channel = this.channel;
    const session = this.session;
    if (channel === null || session === null) return;
    while (!this.stopping && !channel.closed) {
      const now = this.options.clock.now();
      if (now < this.nextSlotMs) {
        await sleep(this.options.clock, this.nextSlotMs - now);
        continue;
      }
      const part = queue.take(now);
      if (part === undefined) {
        const readyAt = queue.nextReadyAtMs();
        await queue.wait(readyAt === null ? 1_000 : readyAt - now);
        continue;
      }
      this.nextSlotMs = now + intervalMs;
      const sending = this.sendOne(part, session);
      this.inFlight = sending;
      await sending;
      this.inFlight = null;
    }
  }

  private async sendOne(part: QueuedPart, session: ModemSession): Promise<void> {
    let result: SendResult;
    try {
      result = await session.send(part.tpduOctets, part.hex);
    } catch (err) {
      this.options.logger.error({ err }, 'unexpected send failure');
      result = { kind: 'unknown', status: 'RESULT_UNKNOWN' };
    }
    const log = this.options.logger.child({ messageKey: part.messageKey, part: part.sequence });
    switch (result.kind) {
      case 'accepted': {
        const messageId = `${this.options.name}-${randomUUID()}`;
        this.sentCount++;
        this.options.onAccepted(this.options.name, result.messageReference, part.destination, messageId);
        log.debug({ messageId, messageReference: result.messageReference }, 'part accepted');
        part.resolve({ part: part.sequence, kind: 'accepted', messageId });
        return;
      }
      case 'rejected': {
        if (result.status.startsWith('CMS_ERROR')) this.lastCmsError = result.status;
        if (!result.temporary) {
          log.warn({ status: result.status }, 'part rejected');
          part.resolve({ part: part.sequence, kind: 'permanent', status: result.status, ...(result.errorCode === undefined ? {} : { errorCode: result.errorCode }) });
          return;
        }
        log.warn({ status: result.status }, 'part failed temporarily');
        part.resolve(temporary(part, result.status, result.errorCode, this.options.retryDelayMs));
        return;
      }
      case 'not-sent':
        if (result.status === 'DEVICE_LOST') {
          // Nothing went out: another device (or this one, reopened) sends it, within the same
          // engine attempt (README, Modem transport).
          this.options.queue.pushFront(part);
          return;
        }
        log.warn({ status: result.status }, 'no prompt from the modem');
        part.resolve(temporary(part, result.status, undefined, this.options.retryDelayMs));
        return;
      case 'unknown':
        log.warn({ status: result.status }, 'send result unknown');
        part.resolve(temporary(part, result.status, undefined, this.options.retryDelayMs));
        return;
    }
  }
}

function temporary(part: QueuedPart, status: string, errorCode: number | undefined, retryAfterMs: number): PartOutcome {
  return { part: part.sequence, kind: 'temporary', status, retryAfterMs, ...(errorCode === undefined ? {} : { errorCode }) };
}
