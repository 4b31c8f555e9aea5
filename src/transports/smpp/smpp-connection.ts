/**
 * One TCP (or TLS) connection to an SMSC carrying one bind, on the `smpp` package.
 *
 * The package has no window, no response timeout, no enquire_link answering and an unbounded
 * callback map, so every request this class sends is tracked by its SessionWindow
 * (session-window.ts: slots, deadlines, fail-all on close), and it reads the stream with its own
 * framer (frame-reader.ts). Nothing waits forever.
 */
import smpp from 'smpp';
import type { OutgoingPdu, PDU, Session } from 'smpp';
import { GatewayError } from '../../common/errors.js';
import type { Logger } from '../../common/log.js';
import { COMMAND_STATUS_CODE, describeCommandStatus } from './command-status.js';
import { FrameReader, MAX_COMMAND_LENGTH_BYTES, SMPP_HEADER_BYTES } from './frame-reader.js';
import { decodeFrame } from './pdu-decoder.js';
import { requestFailure, SessionWindow, type RequestFailureCode, type RequestResult, type ResultCallback } from './session-window.js';
import { EncodedPdu, EncodedResponse } from './submit-sm-encoder.js';

export type { RequestFailureCode, RequestResult } from './session-window.js';

/**
 * SMPP 3.4 §5.2.4: interface_version 0x34 announces SMPP 3.4 (the package's default is 5.0); the
 * server answers a 3.4 bind with it as sc_interface_version (§5.3.2.25).
 */
export const INTERFACE_VERSION_3_4 = 0x34;

/** Longest wait for unbind_resp on stop. */
export const UNBIND_WAIT_MAX_MS = 2_000;

export type BindCommand = 'bind_transceiver' | 'bind_transmitter' | 'bind_receiver';

export interface SmppConnectionOptions {
  host: string;
  port: number;
  tls: boolean;
  tlsRejectUnauthorized: boolean;
  systemId: string;
  password: string;
  systemType: string;
  bindCommand: BindCommand;
  responseTimeoutMs: number;
  /** submit_sm slots of this session's window (SMPP 3.4 §2.7). */
  windowSlots: number;
  enquireLinkIntervalMs: number;
  logger: Logger;
  /** A deliver_sm (or a data_sm, which some SMSCs use for receipts and MO) arrived; the callee answers it with respond(). */
  onDeliverSm(pdu: PDU, connection: SmppConnection): void;
  /** The connection is gone (called once); reason is a short code or description. */
  onClosed(reason: string): void;
  /** A window slot was freed. */
  onSlotFreed?(): void;
}

export class SmppConnection {
  readonly window: SessionWindow;
  private enquireTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private closeReason = '';
  private corked = false;

  private constructor(
    private readonly session: Session,
    private readonly options: SmppConnectionOptions,
  ) {
    this.window = new SessionWindow({
      slots: options.windowSlots,
      responseTimeoutMs: options.responseTimeoutMs,
      onSlotFreed: () => options.onSlotFreed?.(),
    });
  }

  /**
   * Connects and binds. Rejects with GatewayError SMPP_CONNECT_FAILED (TCP/TLS), SMPP_BIND_REFUSED
   * (bind_resp with an error; details.commandStatus) or SMPP_BIND_TIMEOUT.
   */
  static async open(options: SmppConnectionOptions): Promise<SmppConnection> {
    const session = await connectSession(options);
    const connection = new SmppConnection(session, options);
    connection.attach();
    const result = await connection.request(options.bindCommand, {
      system_id: options.systemId,
      password: options.password,
      system_type: options.systemType,
      interface_version: INTERFACE_VERSION_3_4,
      addr_ton: 0,
      addr_npi: 0,
      address_range: '',
    });
    if (result.kind === 'failed') {
      connection.destroy('BIND_NO_RESPONSE');
      throw new GatewayError('SMPP_BIND_TIMEOUT', `no ${options.bindCommand}_resp from ${options.host}:${options.port} (${result.code})`, {
        retryable: true,
      });
    }
    const commandStatus = result.pdu.command_status;
    if (commandStatus !== COMMAND_STATUS_CODE.ESME_ROK) {
      connection.destroy('BIND_REFUSED');
      throw new GatewayError('SMPP_BIND_REFUSED', `${options.bindCommand} refused by ${options.host}:${options.port}: ${describeCommandStatus(commandStatus)}`, {
        retryable: true,
        details: { commandStatus },
      });
    }
    connection.startEnquireLink();
    return connection;
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Requests sent and not yet answered, of every command. */
  get pendingCount(): number {
    return this.window.pendingCount;
  }

  /** Sends a request PDU and resolves with its response, or with a coded failure. Never rejects. */
  request(command: string, fields: Record<string, unknown>): Promise<RequestResult> {
    return new Promise<RequestResult>((resolve) => this.send(command, fields, resolve));
  }

  /**
   * Sends a request PDU; onResult is called exactly once, with the response or a coded failure.
   * The callback form is the submit hot path: no promise per PDU.
   */
  send(command: string, fields: Record<string, unknown>, onResult: ResultCallback): void {
    if (this.closed) {
      onResult(requestFailure(this.failureCode()));
      return;
    }
    this.track(new smpp.PDU(command, fields), onResult, false);
  }

  /**
   * Sends a submit_sm encoded beforehand (encodeSubmitSm) on a slot reserved with
   * window.reserve(); the slot is freed when onResult is called. Otherwise as send().
   */
  sendSubmitSm(pdu: Buffer, onResult: ResultCallback): void {
    this.track(new EncodedPdu('submit_sm', pdu), onResult, true);
  }

  private track(pdu: OutgoingPdu, onResult: ResultCallback, holdsSlot: boolean): void {
    if (this.closed) {
      // The window is closed: add() fails it at once and frees the slot.
      this.window.add(0, onResult, holdsSlot);
      return;
    }
    this.coalesceWrites();
    if (!this.session.send(pdu)) {
      this.markClosed('CONNECTION_LOST');
      this.window.add(pdu.sequence_number, onResult, holdsSlot);
      return;
    }
    this.window.add(pdu.sequence_number, onResult, holdsSlot);
  }

  /** Answers a request the SMSC sent (deliver_sm_resp, enquire_link_resp...). */
  respond(request: PDU, commandStatus: number = COMMAND_STATUS_CODE.ESME_ROK): void {
    if (this.closed) return;
    this.coalesceWrites();
    // SMPP 3.4 §4.6.2 / §4.7.2: deliver_sm_resp's and data_sm_resp's message_id is unused, NULL.
    // One per receipt: written directly (EncodedResponse) rather than through the package's encoder.
    if (request.command === 'deliver_sm' || request.command === 'data_sm') {
      this.session.send(new EncodedResponse(request.command === 'deliver_sm' ? 'deliver_sm_resp' : 'data_sm_resp', request.sequence_number, commandStatus));
      return;
    }
    this.session.send(request.response({ command_status: commandStatus }));
  }

  /**
   * Every PDU is its own socket.write; corking until the next tick hands the PDUs sent in one
   * turn of the event loop (e.g. the submits that a batch of responses let through) to the
   * kernel in one writev instead of one syscall each, the largest single cost per PDU.
   */
  private coalesceWrites(): void {
    if (this.corked) return;
    this.corked = true;
    this.session.socket.cork();
    process.nextTick(this.uncork);
  }

  private readonly uncork = (): void => {
    this.corked = false;
    this.session.socket.uncork();
  };

  /**
   * Graceful close (SMPP 3.4 §4.2): unbind, wait for unbind_resp (at most UNBIND_WAIT_MAX_MS or
   * responseTimeoutMs, whichever is shorter, so stop() stays prompt), then close the socket.
   * Requests still pending fail with TRANSPORT_STOPPED.
   */
  async unbindAndClose(): Promise<void> {
    if (this.closed) return;
    this.stopEnquireLink();
    const closedPromise = new Promise<void>((resolve) => this.session.socket.once('close', () => resolve()));
    const waitMs = Math.min(this.options.responseTimeoutMs, UNBIND_WAIT_MAX_MS);
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      this.request('unbind', {}),
      new Promise<RequestResult>((resolve) => {
        timer = setTimeout(() => resolve(requestFailure('RESPONSE_TIMEOUT')), waitMs);
      }),
    ]);
    clearTimeout(timer);
    if (result.kind === 'failed') this.options.logger.warn({ code: result.code }, 'no unbind_resp; closing anyway');
    this.destroy('TRANSPORT_STOPPED');
    await closedPromise;
  }

  /** Drops the connection at once; pending requests fail with a code derived from reason. */
  destroy(reason: string): void {
    if (this.closed) return;
    this.markClosed(reason);
    this.session.destroy();
  }

  private failureCode(): Exclude<RequestFailureCode, 'RESPONSE_TIMEOUT'> {
    return this.closeReason === 'TRANSPORT_STOPPED' ? 'TRANSPORT_STOPPED' : 'CONNECTION_LOST';
  }

  private attach(): void {
    this.readFramesOurselves();
    this.session.on('error', (err: Error) => {
      this.options.logger.warn({ err: err.message }, 'smpp connection error');
      this.destroy(`SOCKET_ERROR: ${err.message}`);
    });
    this.session.on('close', () => this.markClosed('CONNECTION_CLOSED_BY_PEER'));
  }

  /**
   * The package's reader stalls on a command_length below 16 and drops the link on any PDU it
   * cannot decode; ours (frame-reader.ts, pdu-decoder.ts) drops the link only when the stream
   * cannot be framed any more, and answers a sane but undecodable request with generic_nack.
   */
  private readFramesOurselves(): void {
    const socket = this.session.socket;
    socket.removeAllListeners('readable');
    const reader = new FrameReader();
    const onFrame = (frame: Buffer): void => this.onFrame(frame);
    socket.on('data', (chunk: Buffer) => {
      if (this.closed) return;
      const bad = reader.push(chunk, onFrame);
      if (bad === null) return;
      // SMPP 3.4 §3.1: nothing after an impossible command_length can be framed; drop at once.
      this.options.logger.warn({ commandLength: bad.commandLength, minBytes: SMPP_HEADER_BYTES, maxBytes: MAX_COMMAND_LENGTH_BYTES }, 'impossible command_length from the SMSC: dropping the link');
      this.destroy(`INVALID_COMMAND_LENGTH: ${bad.commandLength}`);
    });
    // Removing the 'readable' listener leaves the socket paused; the 'data' listener must flow.
    socket.resume();
  }

  private onFrame(frame: Buffer): void {
    if (this.closed) return;
    const decoded = decodeFrame(frame);
    if (decoded.kind === 'pdu') {
      this.onPdu(decoded.pdu);
      return;
    }
    const fields = { commandId: decoded.commandId, sequence: decoded.sequenceNumber, reason: decoded.reason };
    if (decoded.isResponse) {
      // Nothing answers a response; its request fails at its deadline like an unanswered one.
      this.options.logger.warn(fields, 'undecodable response from the SMSC ignored');
      return;
    }
    this.options.logger.warn({ ...fields, commandStatus: describeCommandStatus(decoded.nackStatus) }, 'undecodable request from the SMSC: generic_nack, link kept');
    this.nackSequence(decoded.sequenceNumber, decoded.nackStatus);
  }

  private startEnquireLink(): void {
    this.enquireTimer = setInterval(() => {
      void this.request('enquire_link', {}).then((result) => {
        // SMPP 3.4 §4.11: a link that does not answer enquire_link is dead; reconnect.
        if (result.kind === 'failed' && result.code === 'RESPONSE_TIMEOUT') this.destroy('ENQUIRE_LINK_TIMEOUT');
      });
    }, this.options.enquireLinkIntervalMs);
  }

  private stopEnquireLink(): void {
    if (this.enquireTimer !== undefined) clearInterval(this.enquireTimer);
    this.enquireTimer = undefined;
  }

  private onPdu(pdu: PDU): void {
    if (pdu.isResponse()) {
      if (!this.window.complete(pdu)) {
        if (pdu.command === 'generic_nack') {
          // It answers nothing pending (e.g. sequence 0: the SMSC could not read a header, SMPP 3.4 §4.3).
          this.options.logger.warn({ sequence: pdu.sequence_number, commandStatus: describeCommandStatus(pdu.command_status) }, 'generic_nack for no pending request');
        } else {
          this.options.logger.debug({ command: pdu.command, sequence: pdu.sequence_number }, 'response to no pending request (late or unknown)');
        }
      }
      return;
    }
    switch (pdu.command) {
      case 'deliver_sm':
      case 'data_sm':
        // SMPP 3.4 §4.7: data_sm carries the same esm_class and TLVs, its text in message_payload.
        this.options.onDeliverSm(pdu, this);
        return;
      case 'enquire_link':
        this.respond(pdu);
        return;
      case 'unbind':
        // SMPP 3.4 §4.2.1: answer, then the SMSC closes; we reconnect after the usual backoff.
        this.respond(pdu);
        this.stopEnquireLink();
        this.session.close();
        this.markClosed('UNBOUND_BY_SMSC');
        return;
      case 'alert_notification':
        // SMPP 3.4 §4.12: a subscriber became reachable; it has no response and smsgate does
        // not use it (no data_sm queueing), so it is only logged.
        this.options.logger.info({ sourceAddr: pdu['source_addr'], esmeAddr: pdu['esme_addr'] }, 'alert_notification ignored');
        return;
      default:
        // SMPP 3.4 §4.3 / §5.1.3: a command we do not know or do not support (query_sm, submit_sm,
        // outbind on a bound link...) gets generic_nack ESME_RINVCMDID; the link stays up.
        this.options.logger.warn({ command: pdu.command, commandId: pdu.command_id, sequence: pdu.sequence_number }, 'unsupported command from the SMSC: generic_nack ESME_RINVCMDID');
        this.nack(pdu, COMMAND_STATUS_CODE.ESME_RINVCMDID);
    }
  }

  /** generic_nack with the request's sequence number (SMPP 3.4 §4.3.1). */
  private nack(request: PDU, commandStatus: number): void {
    this.nackSequence(request.sequence_number, commandStatus);
  }

  private nackSequence(sequenceNumber: number, commandStatus: number): void {
    if (this.closed) return;
    this.coalesceWrites();
    this.session.send(new smpp.PDU('generic_nack', { sequence_number: sequenceNumber, command_status: commandStatus }));
  }

  private markClosed(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.closeReason = reason;
    this.stopEnquireLink();
    this.window.failAll(this.failureCode());
    this.options.onClosed(reason);
  }
}

function connectSession(options: SmppConnectionOptions): Promise<Session> {
  return new Promise<Session>((resolve, reject) => {
    const session = smpp.connect({
      host: options.host,
      port: options.port,
      tls: options.tls,
      rejectUnauthorized: options.tlsRejectUnauthorized,
    });
    const timer = setTimeout(() => fail(new Error(`no connection within ${options.responseTimeoutMs} ms`)), options.responseTimeoutMs);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      session.removeAllListeners();
      session.on('error', () => undefined); // late errors of a discarded socket
      session.destroy();
      reject(new GatewayError('SMPP_CONNECT_FAILED', `cannot connect to ${options.host}:${options.port}: ${err.message}`, { retryable: true, cause: err }));
    };
    session.once('error', fail);
    session.once(options.tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      // Each PDU is its own small write; without this Nagle holds the next one until the
      // previous is ACKed (up to the peer's 40 ms delayed ACK), which serialises the window.
      session.socket.setNoDelay(true);
      session.removeListener('error', fail);
      resolve(session);
    });
  });
}
