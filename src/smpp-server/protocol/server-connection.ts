/**
 * One customer connection to the SMPP server (SMPP 3.4, the SMSC side): its bind state, the
 * customer's requests in flight, the deliver_sm window towards the customer, the link check.
 *
 * - Frames are cut by frame-reader.ts and decoded by pdu-decoder.ts (submit_sm by
 *   submit-sm-decoder.ts, which keeps its octets as sent). A frame whose length cannot be
 *   trusted drops the link; a sane frame that cannot be decoded, or an unknown command, gets
 *   generic_nack and the link stays (cloudhopper-smpp's recoverable / unrecoverable split).
 * - SMPP 3.4 §2.3, table 2-1: before a bind only the binds, enquire_link and unbind are taken;
 *   anything else is answered ESME_RINVBNDSTS. PDUs that arrive while a bind is being decided
 *   wait for the decision. submit_sm, query_sm and cancel_sm need a transmitter or transceiver
 *   bind (§2.2).
 * - The customer's requests go to the handlers without waiting for each other (SMPP 3.4 §2.7:
 *   responses may come in any order, each with its request's sequence_number); at most
 *   windowSize are with the handlers at once, one more is answered ESME_RTHROTTLED at once.
 * - deliver_sm go through a window of windowSize slots with a deadline of responseTimeoutMs each
 *   (outgoing-requests.ts), everything failed when the connection ends.
 * - After enquireLinkIntervalMs without a PDU from the customer the server sends enquire_link
 *   (§4.11); none answered within responseTimeoutMs closes the connection.
 * - handlers.unbound is called exactly once for every bind the handlers granted, however the
 *   connection ends (unbind, close, loss, a bind granted after the socket was already gone).
 *
 * Passwords are never logged: bind requests are logged by system_id and address only.
 */
import type { Socket } from 'node:net';
import type { OutgoingPdu, PDU } from 'smpp';
import type { Logger } from '../../common/log.js';
import { COMMAND_STATUS_CODE, describeCommandStatus } from '../../transports/smpp/command-status.js';
import { FrameReader, MAX_COMMAND_LENGTH_BYTES, SMPP_HEADER_BYTES } from '../../transports/smpp/frame-reader.js';
import { decodeFrame } from '../../transports/smpp/pdu-decoder.js';
import { UNBIND_WAIT_MAX_MS } from '../../transports/smpp/smpp-connection.js';
import {
  SERVER_STATUS,
  sendsSubmits,
  type BindRequest,
  type BindType,
  type DeliveringSession,
  type DeliverResult,
  type DeliverSmFields,
  type ServerHandlers,
  type ServerSessionInfo,
  type SmppServerConfig,
} from '../contracts.js';
import { OutgoingRequests } from './outgoing-requests.js';
import { BIND_COMMANDS, bindAcceptedBody, COMMAND_ID, genericNack, responseTo, SubmitSmResp } from './server-pdus.js';
import { decodeSubmitSm } from './submit-sm-decoder.js';
import { SubmitRate } from './submit-rate.js';

/**
 * open: connected, not bound; binding: a bind is with the handlers; bound; unbinding: an unbind
 * was sent or received, nothing new is taken; ending: the socket is being closed, nothing more is
 * read; closed.
 */
type Phase = 'open' | 'binding' | 'bound' | 'unbinding' | 'ending' | 'closed';

/** What the listener learns from a connection. */
export interface ConnectionEvents {
  /** A bind was granted and its bind_*_resp written. */
  bound(connection: ServerConnection): void;
  /** The connection is gone (called once, after handlers.unbound). */
  closed(connection: ServerConnection): void;
  /** A submit_sm_resp was decided for a bound session (counted by account and status). */
  submitAnswered(systemId: string, commandStatus: number): void;
}

export interface ServerConnectionOptions {
  socket: Socket;
  config: SmppServerConfig;
  handlers: ServerHandlers;
  logger: Logger;
  now: () => number;
  events: ConnectionEvents;
}

export interface BoundSession {
  info: ServerSessionInfo;
  boundAtMs: number;
  delivering: DeliveringSession;
  submitRate: SubmitRate;
  unboundCalled: boolean;
}

export class ServerConnection {
  readonly remoteAddress: string;
  private phase: Phase = 'open';
  private bound: BoundSession | null = null;
  /** deliver_sm, enquire_link and unbind sent to the customer, awaiting its response. */
  private readonly outgoing: OutgoingRequests;
  /** The customer's requests with the handlers now. */
  private customerInFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly connectedAtMs: number;
  private lastReceivedAtMs: number;
  private enquirePending = false;
  private corked = false;
  private readPaused = false;
  /**
   * Frames read while a bind is with the handlers. SMPP 3.4 §2.3 wants the ESME to wait for
   * bind_resp, but one that sends on at once (pipelining) gets its PDUs taken in order once the
   * bind is decided, not refused for a bind state about to change. Reading is paused meanwhile,
   * so this holds at most the rest of one socket chunk.
   */
  private heldFrames: Buffer[] | null = null;
  private closeReason = 'CONNECTION_CLOSED_BY_PEER';
  private readonly reader = new FrameReader();
  private readonly tickTimer: NodeJS.Timeout;
  private log: Logger;
  readonly closed: Promise<void>;

  constructor(private readonly options: ServerConnectionOptions) {
    const { socket, config, now } = options;
    this.remoteAddress = unmappedAddress(socket.remoteAddress ?? '');
    this.log = options.logger.child({ remoteAddress: this.remoteAddress, remotePort: socket.remotePort });
    this.connectedAtMs = now();
    this.lastReceivedAtMs = this.connectedAtMs;
    this.outgoing = new OutgoingRequests({
      windowSize: config.windowSize,
      responseTimeoutMs: config.responseTimeoutMs,
      now,
      log: () => this.log,
      write: (bytes) => this.writeBytes(bytes),
      mayDeliver: () => this.phase === 'bound',
    });
    this.closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // Each PDU is a small write; without this Nagle holds a response until the previous one is ACKed.
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err: Error) => {
      this.log.debug({ err: err.message }, 'smpp server connection error');
      this.destroy(`SOCKET_ERROR: ${err.message}`);
    });
    socket.on('close', () => this.finish());
    const tickMs = Math.max(5, Math.min(1_000, Math.floor(config.enquireLinkIntervalMs / 4), Math.floor(config.responseTimeoutMs / 4)));
    this.tickTimer = setInterval(() => this.tick(), tickMs);
    this.tickTimer.unref();
  }

  /** The granted bind, while the connection holds one. */
  get session(): BoundSession | null {
    return this.phase === 'bound' || this.phase === 'unbinding' ? this.bound : null;
  }

  /** Requests outstanding in both directions: the customer's with the handlers, ours awaiting a response. */
  get windowInUse(): number {
    return this.customerInFlight + this.outgoing.pendingCount;
  }

  /**
   * Graceful stop (SMPP 3.4 §4.2): a bound session is sent unbind and given at most
   * UNBIND_WAIT_MAX_MS (or responseTimeoutMs if shorter) for unbind_resp; then the socket closes.
   */
  async unbindAndClose(): Promise<void> {
    if (this.phase === 'closed') return;
    if (this.phase === 'bound') {
      this.phase = 'unbinding';
      const waitMs = Math.min(this.options.config.responseTimeoutMs, UNBIND_WAIT_MAX_MS);
      let timer: NodeJS.Timeout | undefined;
      const answered = await Promise.race([
        new Promise<boolean>((resolve) => this.outgoing.request('unbind', (result) => resolve(result.kind === 'response'))),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), waitMs);
        }),
      ]);
      clearTimeout(timer);
      if (!answered) this.log.warn('no unbind_resp from the customer; closing anyway');
    }
    this.destroy('SERVER_STOPPED');
    await this.closed;
  }

  destroy(reason: string): void {
    if (this.phase === 'closed') return;
    if (this.phase !== 'ending') this.closeReason = reason;
    this.phase = 'ending';
    this.options.socket.destroy();
  }

  // -------------------------------------------------------------------------------------------
  // Reading

  private onData(chunk: Buffer): void {
    if (this.phase === 'ending' || this.phase === 'closed') return;
    const bad = this.reader.push(chunk, this.onFrame);
    if (bad === null) return;
    // SMPP 3.4 §3.1: nothing after an impossible command_length can be framed again.
    this.log.warn({ commandLength: bad.commandLength, minBytes: SMPP_HEADER_BYTES, maxBytes: MAX_COMMAND_LENGTH_BYTES }, 'impossible command_length from the customer: closing the connection');
    this.destroy(`INVALID_COMMAND_LENGTH: ${bad.commandLength}`);
  }

  private readonly onFrame = (frame: Buffer): void => {
    if (this.phase === 'ending' || this.phase === 'closed') return;
    this.lastReceivedAtMs = this.options.now();
    if (this.heldFrames !== null) {
      // Copied: the frame is a view of a socket chunk.
      this.heldFrames.push(Buffer.from(frame));
      return;
    }
    if (frame.readUInt32BE(4) === COMMAND_ID.submit_sm) {
      this.onSubmitSm(frame);
      return;
    }
    const decoded = decodeFrame(frame);
    if (decoded.kind === 'undecodable') {
      const fields = { commandId: decoded.commandId, sequence: decoded.sequenceNumber, reason: decoded.reason };
      if (decoded.isResponse) {
        // Nothing answers a response; its request fails at its deadline like an unanswered one.
        this.log.warn(fields, 'undecodable response from the customer ignored');
        return;
      }
      this.log.warn({ ...fields, commandStatus: describeCommandStatus(decoded.nackStatus) }, 'undecodable request from the customer: generic_nack, link kept');
      this.write(genericNack(decoded.sequenceNumber, decoded.nackStatus));
      return;
    }
    const pdu = decoded.pdu;
    if (pdu.isResponse()) this.onResponse(pdu);
    else this.onRequest(pdu);
  };

  private onResponse(pdu: PDU): void {
    if (this.outgoing.complete(pdu)) return;
    this.log.debug({ command: pdu.command, sequence: pdu.sequence_number }, 'response to no pending request (late or unknown)');
  }

  private onRequest(pdu: PDU): void {
    const bindType = BIND_COMMANDS[pdu.command];
    if (bindType !== undefined) {
      this.onBind(pdu, bindType);
      return;
    }
    switch (pdu.command) {
      case 'enquire_link':
        this.write(responseTo(pdu, COMMAND_STATUS_CODE.ESME_ROK));
        return;
      case 'unbind':
        this.onUnbind(pdu);
        return;
      case 'query_sm':
        this.onQuerySm(pdu);
        return;
      case 'cancel_sm':
        this.onCancelSm(pdu);
        return;
    }
    if (this.phase !== 'bound') {
      this.write(responseTo(pdu, SERVER_STATUS.invalidBindStatus));
      return;
    }
    // SMPP 3.4 §4.3 / §5.1.3: a command the server does not take (submit_multi, data_sm,
    // replace_sm, deliver_sm, outbind...) gets generic_nack ESME_RINVCMDID; the link stays up.
    this.log.warn({ command: pdu.command, sequence: pdu.sequence_number }, 'unsupported command from the customer: generic_nack ESME_RINVCMDID');
    this.write(genericNack(pdu.sequence_number, COMMAND_STATUS_CODE.ESME_RINVCMDID));
  }

  // -------------------------------------------------------------------------------------------
  // Bind and unbind

  private onBind(pdu: PDU, bindType: BindType): void {
    if (this.phase !== 'open') {
      // SMPP 3.4 §4.1: a bind on a session that holds (or is getting) one.
      this.write(responseTo(pdu, SERVER_STATUS.alreadyBound));
      return;
    }
    this.phase = 'binding';
    this.heldFrames = [];
    this.updateReading();
    const request: BindRequest = {
      bindType,
      systemId: stringField(pdu, 'system_id'),
      password: stringField(pdu, 'password'),
      systemType: stringField(pdu, 'system_type'),
      interfaceVersion: numberField(pdu, 'interface_version'),
      remoteAddress: this.remoteAddress,
    };
    const logFields = { bindType, systemId: request.systemId, systemType: request.systemType };
    void this.callHandler('bind', () => this.options.handlers.bind(request)).then((decision) => {
      const held = this.heldFrames ?? [];
      this.heldFrames = null;
      if (this.phase !== 'binding') {
        // The connection ended while the handler decided: a granted bind is given back at once.
        if (decision?.kind === 'bound') this.giveBack(decision.session);
        return;
      }
      if (decision === null || decision.kind === 'refused') {
        const status = decision === null ? SERVER_STATUS.systemError : decision.status;
        this.log.info({ ...logFields, commandStatus: describeCommandStatus(status) }, 'bind refused');
        this.write(responseTo(pdu, status));
        this.endAfterWrites('BIND_REFUSED');
        return;
      }
      const info = decision.session;
      const submitRate = new SubmitRate();
      // eslint-disable-next-line @typescript-eslint/no-this-alias
      const connection = this;
      const delivering: DeliveringSession = {
        info,
        get freeSlots() {
          return connection.freeSlots;
        },
        deliver: (fields) => connection.deliver(fields),
      };
      this.bound = { info, boundAtMs: this.options.now(), delivering, submitRate, unboundCalled: false };
      this.phase = 'bound';
      this.log = this.log.child({ systemId: info.account.systemId, sessionId: info.sessionId, bindType });
      this.write(responseTo(pdu, COMMAND_STATUS_CODE.ESME_ROK, bindAcceptedBody(request.interfaceVersion)));
      this.log.info('bound');
      this.options.events.bound(this);
      for (const frame of held) this.onFrame(frame);
      this.updateReading();
    });
  }

  private onUnbind(pdu: PDU): void {
    if (this.phase !== 'bound') {
      // Not bound (or already unbinding): answer and close.
      this.write(responseTo(pdu, COMMAND_STATUS_CODE.ESME_ROK));
      this.endAfterWrites('UNBOUND_BY_CUSTOMER');
      return;
    }
    // SMPP 3.4 §4.2: nothing new is taken; the responses still owed (each submit_sm already
    // durable when its handler resolves) go out first, within responseTimeoutMs, then unbind_resp.
    this.phase = 'unbinding';
    void this.whenNoneInFlight(this.options.config.responseTimeoutMs).then(() => {
      if (this.phase !== 'unbinding') return;
      this.write(responseTo(pdu, COMMAND_STATUS_CODE.ESME_ROK));
      this.endAfterWrites('UNBOUND_BY_CUSTOMER');
    });
  }

  /** Closes once what was written has been handed to the kernel (at most UNBIND_WAIT_MAX_MS). */
  private endAfterWrites(reason: string): void {
    if (this.phase === 'ending' || this.phase === 'closed') return;
    this.closeReason = reason;
    this.phase = 'ending';
    const socket = this.options.socket;
    const timer = setTimeout(() => socket.destroy(), UNBIND_WAIT_MAX_MS);
    timer.unref();
    socket.end(() => {
      clearTimeout(timer);
      socket.destroy();
    });
  }

  private giveBack(info: ServerSessionInfo): void {
    void this.callHandler('unbound', () => this.options.handlers.unbound(info));
  }

  /** The socket closed (the one end of every connection): pending work fails, the bind is given back. */
  private finish(): void {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    clearInterval(this.tickTimer);
    this.outgoing.failAll();
    this.releaseIdleWaiters();
    this.log.info({ reason: this.closeReason }, 'smpp server connection closed');
    const bound = this.bound;
    if (bound !== null && !bound.unboundCalled) {
      bound.unboundCalled = true;
      this.giveBack(bound.info);
    }
    this.options.events.closed(this);
  }

  // -------------------------------------------------------------------------------------------
  // The customer's requests

  /** The bound session that may send submit_sm, query_sm, cancel_sm, or null (ESME_RINVBNDSTS). */
  private submitter(): BoundSession | null {
    const bound = this.phase === 'bound' ? this.bound : null;
    return bound !== null && sendsSubmits(bound.info.bindType) ? bound : null;
  }

  /** Takes a window place for a request to the handlers; false when windowSize are already there. */
  private admit(): boolean {
    if (this.customerInFlight >= this.options.config.windowSize) return false;
    this.customerInFlight++;
    return true;
  }

  private release(): void {
    this.customerInFlight--;
    if (this.customerInFlight === 0) this.releaseIdleWaiters();
  }

  private onSubmitSm(frame: Buffer): void {
    const sequenceNumber = frame.readUInt32BE(12);
    const session = this.submitter();
    if (session === null) {
      // A bound receiver is counted (it is an account's submit refused); before a bind there is no account.
      if (this.phase === 'bound' && this.bound !== null) this.options.events.submitAnswered(this.bound.info.account.systemId, SERVER_STATUS.invalidBindStatus);
      this.write(new SubmitSmResp(sequenceNumber, SERVER_STATUS.invalidBindStatus, ''));
      return;
    }
    const decoded = decodeSubmitSm(frame);
    if (decoded.kind === 'undecodable') {
      this.log.warn({ sequence: sequenceNumber, reason: decoded.reason }, 'undecodable submit_sm: generic_nack ESME_RINVCMDLEN, link kept');
      this.write(genericNack(sequenceNumber, decoded.nackStatus));
      return;
    }
    session.submitRate.record(this.options.now());
    if (decoded.kind === 'refused') {
      this.log.info({ sequence: sequenceNumber, reason: decoded.reason }, 'submit_sm refused');
      this.answerSubmit(session, sequenceNumber, decoded.status, '');
      return;
    }
    if (!this.admit()) {
      this.answerSubmit(session, sequenceNumber, SERVER_STATUS.throttled, '');
      return;
    }
    const fields = decoded.fields;
    void this.callHandler('submit', () => this.options.handlers.submit(session.info, fields)).then((outcome) => {
      this.release();
      if (outcome === null) this.answerSubmit(session, sequenceNumber, SERVER_STATUS.systemError, '');
      else if (outcome.kind === 'accepted') this.answerSubmit(session, sequenceNumber, SERVER_STATUS.ok, outcome.messageId);
      else this.answerSubmit(session, sequenceNumber, outcome.status, '');
    });
  }

  private answerSubmit(session: BoundSession, sequenceNumber: number, commandStatus: number, messageId: string): void {
    this.options.events.submitAnswered(session.info.account.systemId, commandStatus);
    this.write(new SubmitSmResp(sequenceNumber, commandStatus, messageId));
  }

  /**
   * query_sm and cancel_sm are a transmitter's requests (SMPP 3.4 §4.8, §4.9) and take a window place like submit_sm:
   * the session when both hold, else the refusal is answered here and null returned.
   */
  private admitSubmitterRequest(pdu: PDU): BoundSession | null {
    const session = this.submitter();
    if (session === null) {
      this.write(responseTo(pdu, SERVER_STATUS.invalidBindStatus));
      return null;
    }
    if (!this.admit()) {
      this.write(responseTo(pdu, SERVER_STATUS.throttled));
      return null;
    }
    return session;
  }

  private onQuerySm(pdu: PDU): void {
    const session = this.admitSubmitterRequest(pdu);
    if (session === null) return;
    const messageId = stringField(pdu, 'message_id');
    void this.callHandler('query', () => this.options.handlers.query(session.info, messageId, stringField(pdu, 'source_addr'))).then((outcome) => {
      this.release();
      if (outcome === null) {
        this.write(responseTo(pdu, SERVER_STATUS.systemError));
        return;
      }
      if (outcome.kind === 'refused') {
        this.write(responseTo(pdu, outcome.status));
        return;
      }
      this.write(responseTo(pdu, COMMAND_STATUS_CODE.ESME_ROK, {
        message_id: messageId,
        // SMPP 3.4 §7.1.1: a time is 16 characters or empty; anything else would be mangled by the package's time filter.
        final_date: outcome.finalDate.length === 16 ? outcome.finalDate : '',
        message_state: outcome.messageState,
        error_code: outcome.errorCode,
      }));
    });
  }

  private onCancelSm(pdu: PDU): void {
    const session = this.admitSubmitterRequest(pdu);
    if (session === null) return;
    const call = (): ReturnType<ServerHandlers['cancel']> =>
      this.options.handlers.cancel(session.info, stringField(pdu, 'message_id'), stringField(pdu, 'source_addr'), stringField(pdu, 'destination_addr'));
    void this.callHandler('cancel', call).then((outcome) => {
      this.release();
      this.write(responseTo(pdu, outcome === null ? SERVER_STATUS.systemError : outcome.status));
    });
  }

  /** Runs a handler; a throw or rejection is logged and becomes null (ESME_RSYSERR for the caller), the link kept. */
  private async callHandler<T>(name: keyof ServerHandlers, call: () => Promise<T>): Promise<T | null> {
    try {
      return await call();
    } catch (err) {
      this.log.error({ err, handler: name }, 'smpp server handler failed: ESME_RSYSERR');
      return null;
    }
  }

  private whenNoneInFlight(timeoutMs: number): Promise<void> {
    if (this.customerInFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private releaseIdleWaiters(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const waiter of waiters) waiter();
  }

  // -------------------------------------------------------------------------------------------
  // Towards the customer

  get freeSlots(): number {
    return this.outgoing.freeSlots;
  }

  deliver(fields: DeliverSmFields): Promise<DeliverResult> {
    return this.outgoing.deliver(fields);
  }

  // -------------------------------------------------------------------------------------------
  // The link check

  private tick(): void {
    const nowMs = this.options.now();
    this.outgoing.expireWaiting(nowMs);
    const { enquireLinkIntervalMs, responseTimeoutMs } = this.options.config;
    if (this.phase === 'open' && nowMs - this.connectedAtMs >= Math.max(enquireLinkIntervalMs, responseTimeoutMs)) {
      // A connection that never binds holds a socket for nothing (SMPP 5.0's session_init_timer).
      this.log.info('no bind in time: closing the connection');
      this.destroy('NO_BIND');
      return;
    }
    if (this.enquirePending || (this.phase !== 'bound' && this.phase !== 'open') || nowMs - this.lastReceivedAtMs < enquireLinkIntervalMs) return;
    this.enquirePending = true;
    this.outgoing.request('enquire_link', (result) => {
      this.enquirePending = false;
      if (result.kind === 'failed' && result.code === 'RESPONSE_TIMEOUT') {
        // SMPP 3.4 §4.11: a link that does not answer enquire_link is dead.
        this.log.info('no enquire_link_resp from the customer: closing the connection');
        this.destroy('ENQUIRE_LINK_TIMEOUT');
      }
    });
  }

  // -------------------------------------------------------------------------------------------
  // Writing

  private write(pdu: OutgoingPdu): void {
    this.writeBytes(pdu.toBuffer());
  }

  private writeBytes(bytes: Buffer): void {
    const socket = this.options.socket;
    if (this.phase === 'closed' || socket.destroyed || !socket.writable) return;
    if (!this.corked) {
      // The responses of one turn of the event loop (e.g. a batch of commits) go in one writev.
      this.corked = true;
      socket.cork();
      process.nextTick(this.uncork);
    }
    if (socket.write(bytes) || this.readPaused) return;
    // The customer is not reading what we write: stop reading it too until the kernel takes our
    // bytes again, so a customer that sends without reading cannot grow our write buffer without
    // bound (its enquire_link deadline closes it if it never reads again).
    this.readPaused = true;
    this.updateReading();
    socket.once('drain', () => {
      this.readPaused = false;
      this.updateReading();
    });
  }

  /** Reads while nothing holds reading back: our writes draining, or a bind being decided. */
  private updateReading(): void {
    const socket = this.options.socket;
    if (this.phase === 'ending' || this.phase === 'closed') return;
    if (this.readPaused || this.heldFrames !== null) socket.pause();
    else socket.resume();
  }

  private readonly uncork = (): void => {
    this.corked = false;
    this.options.socket.uncork();
  };
}

function stringField(pdu: PDU, name: string): string {
  const value = pdu[name];
  return typeof value === 'string' ? value : '';
}

function numberField(pdu: PDU, name: string): number {
  const value = pdu[name];
  return typeof value === 'number' ? value : 0;
}

/** "::ffff:127.0.0.1" as "127.0.0.1": an IPv4 peer on a dual-stack socket. */
export function unmappedAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice('::ffff:'.length) : address;
}
