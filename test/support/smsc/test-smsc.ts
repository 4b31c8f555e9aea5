/**
 * A scriptable SMSC on the smpp package's server, listening on 127.0.0.1 (port 0), for the SMPP
 * transport's tests, the conformance suite, benchmarks and end-to-end tests.
 *
 * What it can be told to do: accept one set of credentials; answer each submit_sm with an id in
 * decimal or hex, after a delay, never, with a command_status, or by dropping the connection;
 * drop the connection after N submits; send receipts (text only or with TLVs, before or after
 * the submit_sm_resp, with the id in another base); ignore enquire_link. What it records: every
 * PDU received (raw bytes and decoded), bind attempts, the most submits outstanding at once.
 */
import type { AddressInfo } from 'node:net';
import smpp from 'smpp';
import type { PDU, Server, Session } from 'smpp';
import { decodeSubmitSm, PduFramer, type RawSubmitSm } from './pdu-framer.js';

export type SubmitReply =
  | { kind: 'ok'; messageId?: string }
  | { kind: 'status'; commandStatus: number }
  /** Answer with generic_nack (SMPP 3.4 §4.3) instead of submit_sm_resp. */
  | { kind: 'generic_nack'; commandStatus: number }
  /** Keep the submit unanswered forever. */
  | { kind: 'never' }
  /** Close the TCP connection instead of answering. */
  | { kind: 'drop' };

export interface ReceiptPlan {
  /** The `stat:` text, e.g. DELIVRD. */
  stat: string;
  /** Add receipted_message_id and message_state TLVs (SMPP 3.4 §5.3.2.12, §5.3.2.35). */
  tlvs?: boolean;
  /** Send the receipt before the submit_sm_resp. */
  beforeResponse?: boolean;
  err?: string;
}

export interface TestSmscOptions {
  systemId?: string;
  password?: string;
  /** Form of generated message ids in submit_sm_resp. */
  idFormat?: 'decimal' | 'hex';
  /** Form of the id in receipt text and TLV; 'same' = as in submit_sm_resp. */
  receiptIdFormat?: 'same' | 'decimal' | 'hex';
  /** Decides each submit's answer; default ok with a generated id. */
  onSubmit?: (submit: RecordedSubmit) => SubmitReply;
  /** Delay before each submit_sm_resp. */
  responseDelayMs?: number;
  /** Send a receipt for every accepted submit. */
  autoReceipt?: ReceiptPlan | null;
  /** 'ignore' leaves enquire_link unanswered (a dead link as the ESME sees it). */
  enquireLink?: 'answer' | 'ignore';
  /** Delay before each enquire_link_resp (a slow link). */
  enquireLinkDelayMs?: number;
  /** 'ignore' leaves the ESME's unbind unanswered. */
  unbind?: 'answer' | 'ignore';
  /** Close the connection when this many submits have arrived (one-shot; the last one is unanswered). */
  dropAfterSubmits?: number | null;
  /** Record every PDU and submit (default true); benchmarks turn it off to measure the ESME. */
  record?: boolean;
  /** Serve SMPP over TLS with this PEM key and certificate. */
  tls?: { key: string; cert: string } | null;
}

export interface RecordedPdu {
  sessionId: number;
  command: string;
  sequenceNumber: number;
  commandStatus: number;
  raw: Buffer;
}

export interface RecordedSubmit {
  sessionId: number;
  sequenceNumber: number;
  /** Decoded from the raw bytes by our own decoder: short_message and TLVs as octets. */
  wire: RawSubmitSm;
  raw: Buffer;
  /** The id answered, once answered OK. */
  messageId?: string;
}

export interface BindAttempt {
  sessionId: number;
  command: string;
  systemId: string;
  systemType: string;
  interfaceVersion: number;
  accepted: boolean;
}

interface SessionInfo {
  id: number;
  session: Session;
  bindCommand: string | null;
  outstandingSubmits: number;
  framer: PduFramer;
  rawQueue: Buffer[];
  /** deliver_sm awaiting their response: each settles with -1 if the connection closes first. */
  awaitingResponse: Set<() => void>;
}

/** SMPP 3.4 §5.2.28 message_state for the receipt TLV. */
const MESSAGE_STATE_BY_STAT: Readonly<Record<string, number>> = {
  ENROUTE: 1, DELIVRD: 2, EXPIRED: 3, DELETED: 4, UNDELIV: 5, ACCEPTD: 6, UNKNOWN: 7, REJECTD: 8,
};

const ESME_RINVPASWD = 0x0000000e;
/** Stands in for the decoded submit when recording is off. */
const EMPTY_SUBMIT: RawSubmitSm = decodeSubmitSm(Buffer.from('0000002100000004000000000000000100000000000000000000000000000000' + '00', 'hex'));
const ESM_CLASS_SMSC_DELIVERY_RECEIPT = 0x04;

export class TestSmsc {
  readonly options: Required<Omit<TestSmscOptions, 'onSubmit' | 'autoReceipt' | 'dropAfterSubmits' | 'tls'>> &
    Pick<TestSmscOptions, 'onSubmit' | 'autoReceipt' | 'dropAfterSubmits' | 'tls'>;
  readonly received: RecordedPdu[] = [];
  readonly submits: RecordedSubmit[] = [];
  readonly bindAttempts: BindAttempt[] = [];
  /** deliver_sm_resp command_status per receipt sent, in order. */
  readonly deliverResponses: number[] = [];
  maxOutstandingSubmits = 0;
  /** Every submit_sm received, recorded or not. */
  submitCount = 0;
  enquireLinksReceived = 0;
  private readonly sessions = new Map<number, SessionInfo>();
  private nextSessionId = 1;
  private nextMessageNumber = 4_000_000_000;
  private port = 0;

  private constructor(
    private readonly server: Server,
    options: TestSmscOptions,
  ) {
    this.options = {
      systemId: options.systemId ?? 'esme',
      password: options.password ?? 'secret',
      idFormat: options.idFormat ?? 'decimal',
      receiptIdFormat: options.receiptIdFormat ?? 'same',
      responseDelayMs: options.responseDelayMs ?? 0,
      enquireLink: options.enquireLink ?? 'answer',
      enquireLinkDelayMs: options.enquireLinkDelayMs ?? 0,
      unbind: options.unbind ?? 'answer',
      onSubmit: options.onSubmit,
      autoReceipt: options.autoReceipt,
      dropAfterSubmits: options.dropAfterSubmits,
      record: options.record ?? true,
      tls: options.tls,
    };
  }

  static async start(options: TestSmscOptions = {}): Promise<TestSmsc> {
    const server = smpp.createServer(options.tls ? { key: options.tls.key, cert: options.tls.cert } : {});
    const smsc = new TestSmsc(server, options);
    server.on('session', (session: Session) => smsc.onSession(session));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    smsc.port = (server.address() as AddressInfo).port;
    return smsc;
  }

  get address(): { host: string; port: number } {
    return { host: '127.0.0.1', port: this.port };
  }

  /** Sessions currently bound, by bind command. */
  boundSessions(): { id: number; bindCommand: string }[] {
    return [...this.sessions.values()].flatMap((info) => (info.bindCommand === null ? [] : [{ id: info.id, bindCommand: info.bindCommand }]));
  }

  /** The raw socket of a session, to write hand-made bytes (e.g. one byte at a time). */
  socketOf(sessionId: number): import('node:net').Socket {
    const info = this.sessions.get(sessionId);
    if (info === undefined) throw new Error(`no session ${sessionId}`);
    return info.session.socket;
  }

  /** Sends a receipt for messageId (in submit_sm_resp form) to a session that can receive. */
  sendReceipt(messageId: string, plan: ReceiptPlan, destination = '353870000000'): Promise<number> {
    const receiptId = this.receiptIdFor(messageId);
    const stamp = '2311211530';
    const text = `id:${receiptId} sub:001 dlvrd:001 submit date:${stamp} done date:${stamp} stat:${plan.stat} err:${plan.err ?? '000'} text:`;
    const fields: Record<string, unknown> = {
      source_addr_ton: 1,
      source_addr_npi: 1,
      source_addr: destination,
      esm_class: ESM_CLASS_SMSC_DELIVERY_RECEIPT,
      data_coding: 0,
      short_message: Buffer.from(text, 'latin1'),
    };
    if (plan.tlvs === true) {
      fields['receipted_message_id'] = receiptId;
      const state = MESSAGE_STATE_BY_STAT[plan.stat];
      if (state !== undefined) fields['message_state'] = state;
    }
    return this.sendDeliverSm(fields);
  }

  /**
   * Sends a deliver_sm (or a data_sm, as some SMSCs send receipts) and resolves with the
   * response's command_status (-1 if none came).
   */
  sendDeliverSm(fields: Record<string, unknown>, command: 'deliver_sm' | 'data_sm' = 'deliver_sm'): Promise<number> {
    const info = this.receivingSession();
    if (info === undefined) return Promise.reject(new Error('no session bound to receive'));
    return new Promise<number>((resolve) => {
      // One close listener per session settles every deliver_sm still in flight (one listener per
      // deliver_sm would pile up past Node's warning limit when a test sends many at once).
      const onClose = (): void => resolve(-1);
      const sent = info.session.send(new smpp.PDU(command, fields), (response: PDU) => {
        info.awaitingResponse.delete(onClose);
        this.deliverResponses.push(response.command_status);
        resolve(response.command_status);
      });
      if (!sent) resolve(-1);
      else info.awaitingResponse.add(onClose);
    });
  }

  /** Sends enquire_link on every bound session; resolves true when all answered. */
  async sendEnquireLink(): Promise<boolean> {
    const answers = await Promise.all(
      [...this.sessions.values()].filter((info) => info.bindCommand !== null).map(
        (info) =>
          new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), 5_000);
            info.session.send(new smpp.PDU('enquire_link', {}), (response: PDU) => {
              clearTimeout(timer);
              resolve(response.command === 'enquire_link_resp');
            });
          }),
      ),
    );
    return answers.length > 0 && answers.every(Boolean);
  }

  /** Sends unbind on every bound session (SMPP 3.4 §4.2: the SMSC ends the binds). */
  sendUnbind(): void {
    for (const info of this.sessions.values()) if (info.bindCommand !== null) info.session.send(new smpp.PDU('unbind', {}));
  }

  /** Closes every connection at once, unanswered submits included. */
  dropConnections(): void {
    for (const info of this.sessions.values()) info.session.destroy();
  }

  async stop(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Received PDUs of one command, in arrival order. */
  pdus(command: string): RecordedPdu[] {
    return this.received.filter((pdu) => pdu.command === command);
  }

  private receiptIdFor(messageId: string): string {
    const format = this.options.receiptIdFormat;
    if (format === 'same' || format === this.options.idFormat) return messageId;
    return format === 'hex' ? BigInt(messageId).toString(16).toUpperCase() : BigInt(`0x${messageId}`).toString(10);
  }

  private newMessageId(): string {
    const number = this.nextMessageNumber++;
    return this.options.idFormat === 'hex' ? number.toString(16).toUpperCase() : String(number);
  }

  private receivingSession(): SessionInfo | undefined {
    return [...this.sessions.values()].find((info) => info.bindCommand === 'bind_transceiver' || info.bindCommand === 'bind_receiver');
  }

  private onSession(session: Session): void {
    const info: SessionInfo = {
      id: this.nextSessionId++, session, bindCommand: null, outstandingSubmits: 0, framer: new PduFramer(), rawQueue: [], awaitingResponse: new Set(),
    };
    this.sessions.set(info.id, info);
    session.socket.setNoDelay(true);
    // With a 'readable' listener attached (the package's), 'data' fires for exactly what the
    // package reads, so the framer sees every PDU before the package emits it.
    if (this.options.record) session.socket.on('data', (chunk: Buffer) => info.rawQueue.push(...info.framer.push(chunk)));
    session.on('pdu', (pdu: PDU) => this.onPdu(info, pdu));
    session.on('error', () => undefined);
    session.on('close', () => {
      this.sessions.delete(info.id);
      for (const settle of info.awaitingResponse) settle();
      info.awaitingResponse.clear();
    });
  }

  private onPdu(info: SessionInfo, pdu: PDU): void {
    const raw = info.rawQueue.shift() ?? Buffer.alloc(0);
    if (this.options.record) this.received.push({ sessionId: info.id, command: pdu.command, sequenceNumber: pdu.sequence_number, commandStatus: pdu.command_status, raw });
    switch (pdu.command) {
      case 'bind_transceiver':
      case 'bind_transmitter':
      case 'bind_receiver':
        this.onBind(info, pdu);
        return;
      case 'submit_sm':
        this.onSubmit(info, pdu, raw);
        return;
      case 'enquire_link':
        this.enquireLinksReceived++;
        if (this.options.enquireLink === 'ignore') return;
        if (this.options.enquireLinkDelayMs > 0) setTimeout(() => info.session.send(pdu.response()), this.options.enquireLinkDelayMs);
        else info.session.send(pdu.response());
        return;
      case 'unbind':
        if (this.options.unbind === 'ignore') return;
        info.session.send(pdu.response());
        info.bindCommand = null;
        return;
      default:
        return;
    }
  }

  private onBind(info: SessionInfo, pdu: PDU): void {
    const accepted = pdu['system_id'] === this.options.systemId && pdu['password'] === this.options.password;
    this.bindAttempts.push({
      sessionId: info.id,
      command: pdu.command,
      systemId: String(pdu['system_id']),
      systemType: String(pdu['system_type']),
      interfaceVersion: Number(pdu['interface_version']),
      accepted,
    });
    if (!accepted) {
      info.session.send(pdu.response({ command_status: ESME_RINVPASWD }));
      setTimeout(() => info.session.close(), 10);
      return;
    }
    info.bindCommand = pdu.command;
    info.session.send(pdu.response({ system_id: 'TestSMSC' }));
  }

  private onSubmit(info: SessionInfo, pdu: PDU, raw: Buffer): void {
    this.submitCount++;
    const record = this.options.record;
    const submit: RecordedSubmit = { sessionId: info.id, sequenceNumber: pdu.sequence_number, wire: record ? decodeSubmitSm(raw) : EMPTY_SUBMIT, raw };
    if (record) this.submits.push(submit);
    info.outstandingSubmits++;
    this.maxOutstandingSubmits = Math.max(this.maxOutstandingSubmits, info.outstandingSubmits);
    const dropAfter = this.options.dropAfterSubmits;
    if (dropAfter !== undefined && dropAfter !== null && this.submitCount >= dropAfter) {
      this.options.dropAfterSubmits = null;
      info.session.destroy();
      return;
    }
    const reply = this.options.onSubmit?.(submit) ?? { kind: 'ok' };
    if (reply.kind === 'never') return;
    if (reply.kind === 'drop') {
      info.session.destroy();
      return;
    }
    const answer = (): void => {
      info.outstandingSubmits--;
      if (reply.kind === 'status') {
        info.session.send(pdu.response({ command_status: reply.commandStatus }));
        return;
      }
      if (reply.kind === 'generic_nack') {
        info.session.send(new smpp.PDU('generic_nack', { sequence_number: pdu.sequence_number, command_status: reply.commandStatus }));
        return;
      }
      const messageId = reply.messageId ?? this.newMessageId();
      submit.messageId = messageId;
      const receipt = this.options.autoReceipt;
      if (receipt && receipt.beforeResponse === true) {
        void this.sendReceipt(messageId, receipt).catch(() => undefined);
      }
      info.session.send(pdu.response({ message_id: messageId }));
      if (receipt && receipt.beforeResponse !== true) void this.sendReceipt(messageId, receipt).catch(() => undefined);
    };
    if (this.options.responseDelayMs > 0) setTimeout(answer, this.options.responseDelayMs);
    else answer();
  }
}
