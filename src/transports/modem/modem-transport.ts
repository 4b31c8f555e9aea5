/**
 * The GSM modem transport: a pool of modems behind the Transport contract. Parts wait in one
 * queue shared by the devices; each device takes parts at its profile's rate, so the pool sends
 * at the sum of the rates. Status reports become receipts by (device, TP-MR, recipient).
 */
import type { Logger } from 'pino';
import { pino } from 'pino';
import { type Clock, type ClockTimer, sleep, systemClock } from '../../common/clock.js';
import { GatewayError, isGatewayError } from '../../common/errors.js';
import { type DecodedDeliver, type DecodedStatusReport, type SubmitOptions, type SubmitPart, encodePresetSubmitPart, encodeSubmitParts } from '../../pdu/index.js';
import { isFinalStatus, MAX_STATUS_CHARS, statusFromTpStatus } from '../../receipts/index.js';
import { cutHeaderOctets, cutPartRefusal, dataCodingOf, type CutRefusal } from '../customer-cut.js';
import type { ConcatHeader, OutboundMessage, PartOutcome, Transport, TransportHandlers, TransportLink, TransportState } from '../transport.js';
import { type ModemTransportConfig, type ResolvedModemTransportConfig, deviceName, withModemDefaults } from './config.js';
import { type DeviceState, type DeviceStatus, DeviceWorker } from './device-worker.js';
import type { UndecodableReason } from './modem-session.js';
import { PartQueue } from './part-queue.js';
import { loadProfile } from './profile.js';
import { ReceiptMatcher } from './receipt-matcher.js';
import { type SerialBinding, SYSTEM_SERIAL_BINDING } from './serial-port.js';

export interface ModemTransportOptions {
  logger?: Logger;
  /** Registration poll interval; tests shorten it. Default 1 s. */
  registrationPollMs?: number;
  /**
   * How device paths are opened. Default: the OS's serial ports (serialport's own binding). Unit
   * tests pass @serialport/binding-mock to script the modem's replies without a pty.
   */
  serialBinding?: SerialBinding;
  /**
   * The transport's time: receipt-match ages, device state times, send pacing, registration and
   * AT deadlines, health polls and the reopen backoff. Default: the system clock.
   */
  clock?: Clock;
}

/**
 * A customer's own part (OutboundMessage.customerCut) as SMS-SUBMITs, numbered by the engine's
 * part numbers: its UDH as the customer sent it, udh8 with the 8-bit reference and udh16 with the
 * 16-bit one; SAR TLVs become a 16-bit reference UDH with the same reference, total and sequence
 * (a handset reassembles by UDH only, TS 23.040 §9.2.3.24.8). The text goes in the message's
 * encoding (GSM-7 or UCS-2: a Latin-1 part was planned as GSM-7 when it can be, else UCS-2), and
 * a part that no longer fits beside that header fails permanently (CUSTOMER_PART_TOO_LONG).
 */
function cutSubmitParts(message: OutboundMessage, concat: ConcatHeader, wanted: readonly number[], options: SubmitOptions): SubmitPart[] | CutRefusal {
  const scheme = concat.scheme === 'udh8' ? 'udh8' : 'udh16';
  const parts: SubmitPart[] = [];
  for (const part of wanted) {
    const text = message.segments[part - 1];
    if (text === undefined) continue;
    const refusal = cutPartRefusal(text, dataCodingOf(message.encoding), cutHeaderOctets(scheme));
    if (refusal !== null) return refusal;
    const encoded = encodePresetSubmitPart({
      destination: message.destination,
      encoding: message.encoding,
      text,
      concat: { reference: concat.reference, referenceBits: scheme === 'udh8' ? 8 : 16, total: concat.total, sequence: concat.sequence },
    }, options);
    // Numbered as the engine numbers the message's parts (its one segment is part 1), not as the customer's header does.
    parts.push({ ...encoded, sequence: part, total: message.segments.length });
  }
  return parts;
}

/** How often sent parts past their receipt-match window are forgotten. */
const PRUNE_INTERVAL_MS = 60_000;

/** Longest start() waits for the devices' first attempts. */
const START_WAIT_CAP_MS = 10_000;

/** A report can arrive in the same read as its +CMGS result: look again briefly before giving up (Jasmin does the same). */
const RECEIPT_LOOKUP_RETRIES_MS = [50, 200, 1_000] as const;

export class ModemTransport implements Transport {
  readonly type = 'modem' as const;
  readonly name: string;
  readonly windowSize: number;
  readonly maxPerSecond: number;

  private readonly config: ResolvedModemTransportConfig;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly queue: PartQueue;
  private readonly matcher: ReceiptMatcher;
  private readonly workers: DeviceWorker[];
  private handlers: TransportHandlers | null = null;
  private stopped = false;
  private started = false;
  private stateValue: TransportState = { state: 'down', reason: 'not started' };
  private pruneTimer: ClockTimer | null = null;
  /** Device name -> the SIM's configured number (ModemDeviceConfig.number). */
  private readonly simNumbers: ReadonlyMap<string, string>;

  constructor(config: ModemTransportConfig, options: ModemTransportOptions = {}) {
    this.config = withModemDefaults(config);
    this.name = config.name;
    this.logger = (options.logger ?? pino({ level: 'silent' })).child({ transport: config.name });
    this.clock = options.clock ?? systemClock();
    this.queue = new PartQueue(this.clock);
    const binding = options.serialBinding ?? SYSTEM_SERIAL_BINDING;
    this.matcher = new ReceiptMatcher(this.config.receiptMatchWindowMs);
    this.simNumbers = new Map(this.config.devices.flatMap((device) => (device.number === undefined ? [] : [[deviceName(device), device.number] as const])));
    // Profiles are loaded (and validated) up front: a bad profile is a config error, not a runtime one.
    this.workers = this.config.devices.map((device) => {
      const profile = loadProfile(device.profile ?? 'generic', this.config.profilesDir);
      const name = deviceName(device);
      return new DeviceWorker({
        name,
        path: device.path,
        profile,
        baudRate: device.baudRate ?? profile.baudRate,
        messagesPerMinute: device.messagesPerMinute ?? profile.messagesPerMinute,
        pin: device.pin,
        smsc: device.smsc,
        registrationTimeoutMs: this.config.registrationTimeoutMs,
        registrationPollMs: options.registrationPollMs ?? 1_000,
        healthIntervalMs: this.config.healthIntervalMs,
        reopenBackoffMs: this.config.reopenBackoffMs,
        binding,
        clock: this.clock,
        retryDelayMs: this.config.retryDelayMs,
        queue: this.queue,
        logger: this.logger.child({ device: name }),
        onAccepted: (dev, mr, destination, messageId) => this.matcher.remember(dev, mr, destination, messageId, this.clock.now()),
        onStatusReport: (dev, report, hex) => this.onStatusReport(dev, report, hex),
        onInbound: (dev, message, hex) => this.onInbound(dev, message, hex),
        onUndecodable: (dev, hex, reason) => this.onUndecodable(dev, hex, reason),
        onStateChange: (dev, state, reason) => this.onDeviceState(dev, state, reason),
      });
    });
    const names = new Set(this.workers.map((w) => w.name));
    if (names.size !== this.workers.length) {
      throw new GatewayError('MODEM_CONFIG_INVALID', `modem transport '${config.name}': device names must be unique (set 'name' where paths end alike)`);
    }
    // One part in flight per device, plus one waiting so no device idles between parts.
    this.windowSize = Math.max(1, this.workers.length * 2);
    this.maxPerSecond = this.workers.reduce((sum, w) => sum + w.messagesPerMinute, 0) / 60;
  }

  setHandlers(handlers: TransportHandlers): void {
    this.handlers = handlers;
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.setState({ state: 'binding' });
    this.schedulePrune();
    // Each device's first attempt ends when it is ready or has failed once; a modem still waiting
    // for the network (registrationTimeoutMs) does not hold up the gateway's start beyond the cap.
    let capReached!: () => void;
    const cap = new Promise<void>((resolve) => {
      capReached = resolve;
    });
    const capTimer = this.clock.setTimer(() => capReached(), START_WAIT_CAP_MS);
    await Promise.race([Promise.all(this.workers.map((w) => w.start())), cap]);
    this.clock.clearTimer(capTimer);
    this.refreshState();
  }

  async stop(drainTimeoutMs = 5_000): Promise<void> {
    this.stopped = true;
    if (this.pruneTimer !== null) this.clock.clearTimer(this.pruneTimer);
    this.pruneTimer = null;
    await Promise.all(this.workers.map((w) => w.stop(drainTimeoutMs)));
    for (const part of this.queue.drainAll()) {
      part.resolve({ part: part.sequence, kind: 'not-sent', reason: 'TRANSPORT_STOPPED' });
    }
    this.setState({ state: 'down', reason: 'stopped' });
  }

  currentState(): TransportState {
    return this.stateValue;
  }

  /** Per-device state, signal, registration and operator as last polled. */
  devices(): DeviceStatus[] {
    return this.workers.map((w) => w.status());
  }

  links(): TransportLink[] {
    return this.devices().map((device) => ({
      name: device.name,
      state: device.state === 'ready' ? 'bound' : device.state === 'opening' || device.state === 'initialising' ? 'binding' : 'down',
      sinceMs: device.sinceMs,
      lastError: device.lastError,
      windowUsed: device.sending ? 1 : 0,
      windowSize: 1,
      radio: {
        operator: device.health?.operator ?? null,
        signalDbm: device.health?.signalDbm ?? null,
        registration: device.health?.registration ?? 'unknown',
        lastCmsError: device.lastCmsError,
      },
    }));
  }

  async submit(message: OutboundMessage): Promise<PartOutcome[]> {
    const total = message.segments.length;
    const wanted = message.partNumbers ?? Array.from({ length: total }, (_, i) => i + 1);
    if (this.stopped || this.stateValue.state !== 'bound') {
      const reason = this.stopped ? 'TRANSPORT_STOPPED' : 'TRANSPORT_DOWN';
      return wanted.map((part) => ({ part, kind: 'not-sent', reason }));
    }
    let parts: SubmitPart[];
    try {
      const cut = message.customerCut;
      const options = { statusReport: this.config.statusReports, validityMinutes: this.config.validityMinutes };
      if (cut !== undefined && cut.concat !== null) {
        const cutParts = cutSubmitParts(message, cut.concat, wanted, options);
        if ('status' in cutParts) {
          this.logger.warn({ messageKey: message.messageKey, status: cutParts.status }, cutParts.detail);
          return wanted.map((part) => ({ part, kind: 'permanent', status: cutParts.status }));
        }
        parts = cutParts;
      } else {
        parts = encodeSubmitParts(
          { destination: message.destination, encoding: message.encoding, segments: message.segments, reference: message.concatReference & 0xff, referenceBits: 8 },
          options,
        );
      }
    } catch (err) {
      // A message the codec cannot encode will never go: permanent, with the codec's code as status.
      const status = isGatewayError(err) ? err.code.slice(0, MAX_STATUS_CHARS) : 'PDU_ENCODE_FAILED';
      this.logger.warn({ messageKey: message.messageKey, status }, 'cannot encode message');
      return wanted.map((part) => ({ part, kind: 'permanent', status }));
    }
    const outcomes = wanted.map((sequence) => {
      const part = parts.find((p) => p.sequence === sequence);
      if (part === undefined) return Promise.resolve<PartOutcome>({ part: sequence, kind: 'permanent', status: 'NO_SUCH_PART' });
      return new Promise<PartOutcome>((resolve) => {
        this.queue.push({
          messageKey: message.messageKey,
          destination: message.destination,
          sequence,
          total: part.total,
          hex: part.hex,
          tpduOctets: part.tpduOctets,
          notBeforeMs: 0,
          resolve,
        });
      });
    });
    return Promise.all(outcomes);
  }

  /** Forgets sent parts whose receipt window has passed, once a minute. */
  private schedulePrune(): void {
    this.pruneTimer = this.clock.setTimer(() => {
      this.matcher.prune(this.clock.now());
      if (!this.stopped) this.schedulePrune();
    }, PRUNE_INTERVAL_MS);
  }

  private setState(state: TransportState): void {
    const same = JSON.stringify(state) === JSON.stringify(this.stateValue);
    this.stateValue = state;
    if (!same) this.handlers?.onState(state);
  }

  private refreshState(): void {
    if (this.stopped) return;
    const ready = this.workers.filter((w) => w.state === 'ready').length;
    if (ready > 0) {
      this.setState({ state: 'bound', detail: `${ready}/${this.workers.length} devices ready` });
      return;
    }
    const starting = this.workers.some((w) => w.state === 'opening' || w.state === 'initialising');
    this.setState(starting && this.stateValue.state !== 'bound' ? { state: 'binding' } : { state: 'down', reason: 'no modem ready' });
    // No device can send: waiting parts fail now rather than sit in a queue nobody drains.
    for (const part of this.queue.drainAll()) {
      part.resolve({ part: part.sequence, kind: 'not-sent', reason: 'TRANSPORT_DOWN' });
    }
  }

  private onDeviceState(device: string, state: DeviceState, reason?: string): void {
    this.logger.info({ device, state, ...(reason === undefined ? {} : { reason }) }, 'modem state');
    this.refreshState();
  }

  private async onStatusReport(device: string, report: DecodedStatusReport, hex: string): Promise<void> {
    const handlers = this.handlers;
    if (handlers === null) throw new Error('no receipt handler set; report left unacknowledged');
    let messageId = this.matcher.match(device, report.messageReference, report.recipient.digits, this.clock.now());
    for (const delayMs of RECEIPT_LOOKUP_RETRIES_MS) {
      if (messageId !== null) break;
      await sleep(this.clock, delayMs);
      messageId = this.matcher.match(device, report.messageReference, report.recipient.digits, this.clock.now());
    }
    if (messageId === null) {
      this.logger.warn({ device, messageReference: report.messageReference, status: report.status, pdu: hex }, 'status report matches no sent part');
      return;
    }
    const status = statusFromTpStatus(report.status);
    const final = isFinalStatus(status);
    await handlers.onReceipt({
      messageId,
      status,
      final,
      errorCode: String(report.status),
      doneAt: report.dischargeTime.instant,
      raw: hex,
    });
    if (final) this.matcher.forget(device, report.messageReference, messageId);
  }

  private async onUndecodable(device: string, hex: string, reason: UndecodableReason): Promise<void> {
    const store = this.handlers?.onUndecodable;
    if (store === undefined) throw new Error('no undecodable-PDU handler set; PDU left on the SIM');
    await store({ device, hex, reasonCode: reason.code, reason: reason.message, receivedAt: new Date(this.clock.now()).toISOString() });
  }

  /**
   * Hands each SMS-DELIVER on as it is read, a part of a concatenated one with its UDH reference:
   * the receiving side stores parts durably and joins them (src/inbound), so the part can be
   * deleted from the SIM at once. A full SIM therefore never holds parts back waiting for others.
   */
  private async onInbound(device: string, message: DecodedDeliver, hex: string): Promise<void> {
    const handlers = this.handlers;
    if (handlers === null) throw new Error('no inbound handler set; message left on the SIM');
    const { userData, dataCoding } = message;
    const concat = userData.concat;
    const alphabet = dataCoding.alphabet;
    await handlers.onInbound({
      from: message.originator.digits,
      to: this.simNumbers.get(device) ?? device,
      text: userData.text,
      receivedAt: message.serviceCentreTimestamp.instant,
      raw: hex,
      ...(alphabet === 'GSM-7' ? {} : { content: { coding: alphabet === 'UCS-2' ? 'ucs2' : 'binary', octetsHex: userData.dataHex } }),
      ...(concat === null ? {} : { concat: { scheme: concat.referenceBits === 16 ? 'udh16' : 'udh8', reference: concat.reference, total: concat.total, sequence: concat.sequence } }),
    });
  }
}
