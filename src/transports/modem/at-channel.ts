/**
 * One AT conversation with one modem: a single command in flight, each with its own deadline,
 * its final result as a typed union, and unsolicited result codes routed apart from command
 * responses even when they arrive between a command and its result.
 *
 * The channel does not own the serial port: it writes through `AtLink` and is fed the bytes the
 * port reads (`receive`). Closing the link fails the command in flight and everything queued
 * with AT_CLOSED, so no caller waits forever.
 */
import { type Clock, sleep, systemClock } from '../../common/clock.js';
import { GatewayError } from '../../common/errors.js';
import { redactAtCommand } from './at-command-redaction.js';
import { AtFramer, type AtFrame } from './at-framer.js';
import { type FinalResult, classifyLine, lineName } from './at-line.js';

export interface AtLink {
  write(data: string): void;
}

export interface Urc {
  /** '+CMTI', '+CDS', 'RING', '^RSSI' ... */
  name: string;
  /** Text after the colon. */
  args: string;
  /** The PDU line that follows +CMT: / +CDS: headers, else null. */
  pdu: string | null;
}

export interface AtResponse {
  /** Information lines of the response, in order (echo and URCs removed). */
  lines: string[];
  /** PDUs that followed +CMGR: / +CMGL: headers. */
  pdus: { header: string; hex: string }[];
  final: FinalResult;
}

export interface CommandOptions {
  timeoutMs: number;
  /** The information-response prefix this command answers with, e.g. '+CREG' for AT+CREG?. */
  expectPrefix?: string;
}

export interface PduSendOptions {
  promptTimeoutMs: number;
  resultTimeoutMs: number;
}

export interface AtChannelOptions {
  onUrc(urc: Urc): void;
  /** Lines nobody asked for and that are not known URCs, for logging. */
  onStray?(text: string): void;
  /** After a timeout, a final result arriving within this window is the late answer and is dropped. */
  lateFinalGuardMs?: number;
  /** Command deadlines and the late-answer guard run on this clock (default: the system clock). */
  clock?: Clock;
}

/** TS 27.005 §3.5.1: <ctrl-Z> ends the PDU, <ESC> cancels the send. */
export const CTRL_Z = '\x1a';
export const ESC = '\x1b';

interface InFlight {
  command: string;
  expectPrefix: string | null;
  lines: string[];
  pdus: { header: string; hex: string }[];
  awaitingPrompt: boolean;
  /** Set once the PDU and Ctrl-Z were written: from then on the network may have the message. */
  pduWritten: boolean;
  onPrompt: (() => void) | null;
  resolve(response: AtResponse): void;
  reject(err: GatewayError): void;
}

export class AtChannel {
  private readonly framer = new AtFramer();
  private inFlight: InFlight | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  private closedReason: string | null = null;
  private discardFinalUntilMs = 0;
  private readonly clock: Clock;

  constructor(
    private readonly link: AtLink,
    private readonly options: AtChannelOptions,
  ) {
    this.clock = options.clock ?? systemClock();
  }

  get closed(): boolean {
    return this.closedReason !== null;
  }

  /** Feeds bytes read from the port. */
  receive(chunk: Uint8Array | string): void {
    for (const frame of this.framer.push(chunk)) this.onFrame(frame);
  }

  /** Fails the command in flight and every queued one; later calls fail at once. */
  close(reason: string): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    const err = new GatewayError('AT_CLOSED', `modem link closed: ${reason}`, { retryable: true });
    const current = this.inFlight;
    this.inFlight = null;
    // A send cut after its PDU went out has an unknown result: say so with its own code.
    current?.reject(current.pduWritten ? new GatewayError('AT_CLOSED_AFTER_PDU', `modem link closed after the PDU was written: ${reason}`, { retryable: true }) : err);
  }

  /** Runs one command (without the trailing CR) and resolves with its response, whatever the final result. */
  command(command: string, options: CommandOptions): Promise<AtResponse> {
    return this.serialize(() => this.runCommand(command, options));
  }

  /**
   * TS 27.005 §3.5.1 AT+CMGS=<length>: waits for the '> ' prompt, writes the PDU and Ctrl-Z, and
   * resolves with the response. A prompt that never comes is cancelled with ESC and rejected with
   * AT_PROMPT_TIMEOUT (nothing was sent); no final result after the PDU is AT_RESULT_TIMEOUT (the
   * network may or may not have taken it).
   */
  sendPdu(tpduOctets: number, hex: string, options: PduSendOptions): Promise<AtResponse> {
    return this.serialize(() => this.runPdu(tpduOctets, hex, options));
  }

  private serialize<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(
      () => task(),
      () => task(),
    );
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** A new in-flight record and the promise its final result settles. */
  private begin(command: string, expectPrefix: string | null, awaitingPrompt: boolean): { flight: InFlight; response: Promise<AtResponse> } {
    let settle!: Pick<InFlight, 'resolve' | 'reject'>;
    const response = new Promise<AtResponse>((resolve, reject) => {
      settle = { resolve, reject };
    });
    const flight: InFlight = { command, expectPrefix, lines: [], pdus: [], awaitingPrompt, pduWritten: false, onPrompt: null, ...settle };
    return { flight, response };
  }

  private checkOpen(): void {
    if (this.closedReason !== null) {
      throw new GatewayError('AT_CLOSED', `modem link closed: ${this.closedReason}`, { retryable: true });
    }
  }

  private async runCommand(command: string, options: CommandOptions): Promise<AtResponse> {
    this.checkOpen();
    const { flight, response } = this.begin(command, options.expectPrefix ?? null, false);
    this.inFlight = flight;
    this.link.write(`${command}\r`);
    return this.withDeadline(flight, response, options.timeoutMs, 'AT_TIMEOUT', `${redactAtCommand(command)} got no final result`);
  }

  private async runPdu(tpduOctets: number, hex: string, options: PduSendOptions): Promise<AtResponse> {
    this.checkOpen();
    const command = `AT+CMGS=${tpduOctets}`;
    const { flight, response: pending } = this.begin(command, '+CMGS', true);
    let answer!: (prompted: boolean) => void;
    const prompted = new Promise<boolean>((resolve) => {
      answer = resolve;
    });
    flight.onPrompt = () => answer(true);
    const promptTimer = this.clock.setTimer(() => answer(false), options.promptTimeoutMs);
    this.inFlight = flight;
    this.link.write(`${command}\r`);
    const early = pending.then(
      () => false,
      () => false,
    );
    const gotPrompt = await Promise.race([prompted, early]);
    this.clock.clearTimer(promptTimer);
    if (!gotPrompt && this.inFlight === flight && flight.awaitingPrompt) {
      // No prompt in time. TS 27.005 §3.5.1: ESC aborts the send; its OK/ERROR is absorbed here.
      flight.awaitingPrompt = false;
      this.link.write(ESC);
      await Promise.race([pending.catch(() => undefined), sleep(this.clock, this.options.lateFinalGuardMs ?? 1_000)]);
      if (this.inFlight === flight) this.inFlight = null;
      pending.catch(() => undefined);
      throw new GatewayError('AT_PROMPT_TIMEOUT', `no '> ' prompt within ${options.promptTimeoutMs} ms`, { retryable: true });
    }
    if (!gotPrompt) return pending;
    flight.pduWritten = true;
    this.link.write(`${hex}${CTRL_Z}`);
    return this.withDeadline(flight, pending, options.resultTimeoutMs, 'AT_RESULT_TIMEOUT', `${redactAtCommand(command)} got no final result after the PDU`);
  }

  private withDeadline(flight: InFlight, pending: Promise<AtResponse>, timeoutMs: number, code: 'AT_TIMEOUT' | 'AT_RESULT_TIMEOUT', message: string): Promise<AtResponse> {
    const timer = this.clock.setTimer(() => {
      if (this.inFlight !== flight) return;
      this.inFlight = null;
      this.discardFinalUntilMs = this.clock.now() + (this.options.lateFinalGuardMs ?? 1_000);
      flight.reject(new GatewayError(code, `${message} within ${timeoutMs} ms`, { retryable: true, details: { command: redactAtCommand(flight.command), timeoutMs } }));
    }, timeoutMs);
    return pending.finally(() => this.clock.clearTimer(timer));
  }

  private onFrame(frame: AtFrame): void {
    const flight = this.inFlight;
    if (frame.kind === 'prompt') {
      if (flight?.awaitingPrompt && flight.onPrompt) {
        flight.awaitingPrompt = false;
        flight.onPrompt();
      } else this.options.onStray?.('> ');
      return;
    }
    if (frame.kind === 'pdu') {
      const name = lineName(frame.header);
      if (name === '+CMT' || name === '+CDS') {
        this.options.onUrc({ name, args: frame.header.slice(frame.header.indexOf(':') + 1).trim(), pdu: frame.hex });
      } else if (flight !== null) flight.pdus.push({ header: frame.header, hex: frame.hex });
      else this.options.onStray?.(`${frame.header} ${frame.hex}`);
      return;
    }
    const text = frame.text;
    // V.250 §6.2.4: until ATE0 the modem echoes the command line back.
    if (flight !== null && text.trim().toUpperCase() === flight.command.toUpperCase()) return;
    const line = classifyLine(text, flight?.expectPrefix ?? null);
    if (line.kind === 'urc') {
      this.options.onUrc({ name: line.name, args: line.args, pdu: null });
      return;
    }
    if (line.kind === 'final') {
      if (flight === null) {
        if (this.clock.now() > this.discardFinalUntilMs) this.options.onStray?.(text);
        this.discardFinalUntilMs = 0;
        return;
      }
      this.inFlight = null;
      flight.awaitingPrompt = false;
      flight.resolve({ lines: flight.lines, pdus: flight.pdus, final: line.result });
      return;
    }
    if (flight !== null) flight.lines.push(text);
    else this.options.onStray?.(text);
  }
}
