/**
 * The seam for the protocol layer's tests: a ServerHandlers written here (the real handlers are
 * the services', outside this layer), the listener on a loopback port, and customers on the
 * `smpp` npm package or raw sockets.
 */
import { once } from 'node:events';
import { connect as connectTcp, type Socket } from 'node:net';
import smpp from 'smpp';
import type { PDU, Session } from 'smpp';
import { silentLogger, type Logger } from '../../../src/common/log.js';
import type {
  BindDecision,
  BindRequest,
  QueryOutcome,
  ServerHandlers,
  ServerSessionInfo,
  ServerStatus,
  SmppAccount,
  SmppServerConfig,
  SubmitOutcome,
  SubmitSmFields,
} from '../../../src/smpp-server/contracts.js';
import { SERVER_STATUS } from '../../../src/smpp-server/contracts.js';
import { startSmppListener, type SmppListener } from '../../../src/smpp-server/protocol/listener.js';
import { pollUntil } from '../../support/poll-until.js';

export const ACCOUNT: SmppAccount = { id: 7, systemId: 'cust1', clientId: 3, clientName: 'acme', maxBinds: null, allowIps: [] };
export const PASSWORD = 'pw123';

export interface RecordedSubmit {
  session: ServerSessionInfo;
  fields: SubmitSmFields;
}

/** Handlers that grant ACCOUNT with PASSWORD and record every call; submit is replaceable per test. */
export class TestHandlers implements ServerHandlers {
  readonly binds: BindRequest[] = [];
  readonly unbounds: ServerSessionInfo[] = [];
  readonly submits: RecordedSubmit[] = [];
  readonly queries: Array<{ messageId: string; sourceAddr: string }> = [];
  readonly cancels: Array<{ messageId: string; sourceAddr: string; destinationAddr: string }> = [];
  private sessionCount = 0;
  private messageCount = 0;
  /** Replace to decide submits differently (delay, refuse, throw). */
  onSubmit: (session: ServerSessionInfo, fields: SubmitSmFields) => Promise<SubmitOutcome> = async () => ({ kind: 'accepted', messageId: `m${++this.messageCount}` });
  onBind: (request: BindRequest) => Promise<BindDecision> = async (request) => this.decideBind(request);
  queryOutcome: QueryOutcome = { kind: 'found', finalDate: '', messageState: 1, errorCode: 0 };
  cancelStatus: ServerStatus = SERVER_STATUS.ok;

  decideBind(request: BindRequest): BindDecision {
    if (request.systemId !== ACCOUNT.systemId || request.password !== PASSWORD) return { kind: 'refused', status: SERVER_STATUS.bindFailed };
    return { kind: 'bound', session: { sessionId: `s${++this.sessionCount}`, account: ACCOUNT, bindType: request.bindType, remoteAddress: request.remoteAddress } };
  }

  bind(request: BindRequest): Promise<BindDecision> {
    this.binds.push(request);
    return this.onBind(request);
  }

  async unbound(session: ServerSessionInfo): Promise<void> {
    this.unbounds.push(session);
  }

  submit(session: ServerSessionInfo, fields: SubmitSmFields): Promise<SubmitOutcome> {
    this.submits.push({ session, fields });
    return this.onSubmit(session, fields);
  }

  async query(_session: ServerSessionInfo, messageId: string, sourceAddr: string): Promise<QueryOutcome> {
    this.queries.push({ messageId, sourceAddr });
    return this.queryOutcome;
  }

  async cancel(_session: ServerSessionInfo, messageId: string, sourceAddr: string, destinationAddr: string): Promise<{ status: ServerStatus }> {
    this.cancels.push({ messageId, sourceAddr, destinationAddr });
    return { status: this.cancelStatus };
  }
}

export const TEST_CONFIG: SmppServerConfig = {
  host: '127.0.0.1',
  port: 0,
  windowSize: 10,
  enquireLinkIntervalMs: 30_000,
  responseTimeoutMs: 5_000,
  receiptRetentionHours: 72,
};

export async function startTestListener(handlers: ServerHandlers, config: Partial<SmppServerConfig> = {}, logger: Logger = silentLogger()): Promise<SmppListener> {
  return startSmppListener({ config: { ...TEST_CONFIG, ...config }, handlers, logger, nodeId: 'node-a' });
}

/** Polls until check() is true; fails with what after timeoutMs. */
export async function waitUntil(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  await pollUntil(check, timeoutMs, () => what, 5);
}

/** A customer on the `smpp` package: every PDU it receives is kept, requests are answered only when the test says so. */
export class PackageCustomer {
  readonly received: PDU[] = [];
  closed = false;

  private constructor(readonly session: Session) {
    session.on('pdu', (pdu: PDU) => this.received.push(pdu));
    session.on('close', () => {
      this.closed = true;
    });
    session.on('error', () => undefined);
  }

  static async connect(port: number, tls?: { ca: Buffer }): Promise<PackageCustomer> {
    const session = smpp.connect(
      tls === undefined ? { host: '127.0.0.1', port } : { host: '127.0.0.1', port, tls: true, ca: tls.ca, servername: 'localhost' },
    );
    await once(session, tls === undefined ? 'connect' : 'secureConnect');
    return new PackageCustomer(session);
  }

  /** Sends a request and resolves with its response (any PDU answering its sequence_number). */
  request(command: string, fields: Record<string, unknown> = {}): Promise<PDU> {
    return new Promise<PDU>((resolve, reject) => {
      const pdu = new smpp.PDU(command, fields);
      if (!this.session.send(pdu)) {
        reject(new Error('socket not writable'));
        return;
      }
      const sequence = pdu.sequence_number;
      const check = (): void => {
        const answer = this.received.find((candidate) => candidate.isResponse() && candidate.sequence_number === sequence);
        if (answer !== undefined) {
          this.session.removeListener('pdu', check);
          resolve(answer);
        }
      };
      this.session.on('pdu', check);
      check();
    });
  }

  /** Sends a request without waiting; its sequence_number is returned. */
  send(command: string, fields: Record<string, unknown> = {}): number {
    const pdu = new smpp.PDU(command, fields);
    this.session.send(pdu);
    return pdu.sequence_number;
  }

  bind(command: 'bind_transmitter' | 'bind_receiver' | 'bind_transceiver', password = PASSWORD, systemId = ACCOUNT.systemId): Promise<PDU> {
    return this.request(command, { system_id: systemId, password, system_type: 'test', interface_version: 0x34 });
  }

  requestsOf(command: string): PDU[] {
    return this.received.filter((pdu) => pdu.command === command);
  }

  responseTo(sequence: number): PDU | undefined {
    return this.received.find((pdu) => pdu.isResponse() && pdu.sequence_number === sequence);
  }

  close(): void {
    this.session.destroy();
  }
}

/** A raw TCP customer: bytes in, frames out (for garbled PDUs the package would not write). */
export class RawCustomer {
  private buffered = Buffer.alloc(0);
  readonly frames: Buffer[] = [];
  closed = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      while (this.buffered.length >= 4 && this.buffered.length >= this.buffered.readUInt32BE(0)) {
        const length = this.buffered.readUInt32BE(0);
        this.frames.push(this.buffered.subarray(0, length));
        this.buffered = this.buffered.subarray(length);
      }
    });
    socket.on('close', () => {
      this.closed = true;
    });
    socket.on('error', () => undefined);
  }

  static async connect(port: number): Promise<RawCustomer> {
    const socket = connectTcp(port, '127.0.0.1');
    await once(socket, 'connect');
    return new RawCustomer(socket);
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  async nextFrame(index: number): Promise<Buffer> {
    await waitUntil(() => this.frames.length > index, `frame ${index} from the server`);
    return this.frames[index]!;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A header-only PDU or one with the given body. */
export function rawPdu(commandId: number, sequenceNumber: number, body: Buffer = Buffer.alloc(0), commandStatus = 0): Buffer {
  const header = Buffer.alloc(16);
  header.writeUInt32BE(16 + body.length, 0);
  header.writeUInt32BE(commandId, 4);
  header.writeUInt32BE(commandStatus, 8);
  header.writeUInt32BE(sequenceNumber, 12);
  return Buffer.concat([header, body]);
}

export function header(frame: Buffer): { commandId: number; commandStatus: number; sequenceNumber: number } {
  return { commandId: frame.readUInt32BE(4), commandStatus: frame.readUInt32BE(8), sequenceNumber: frame.readUInt32BE(12) };
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
