/**
 * An SMSC that behaves like a carrier towards a cluster of gateway nodes: it
 * enforces a bind limit per system_id (a bind over the limit is refused with ESME_RBINDFAIL, as
 * carriers do), sends each receipt on a bound session OTHER than the one that submitted the
 * message (when there is one; the other binds take turns), keeps every receipt until a
 * deliver_sm_resp with status 0 acknowledges it (a bind that does not answer within
 * receiptResponseTimeoutMs gets it offered again, the binds taking turns; a node frozen by SIGSTOP
 * keeps its TCP connection open, and a carrier does not wait for it forever), and records
 * what a cluster test asserts: the most binds open at once, bind attempts refused, submits per
 * destination (duplicates), the message id given to each submit, and the most submits accepted
 * within any one second.
 */
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import smpp from 'smpp';
import type { PDU, Server, Session } from 'smpp';

export const ESME_RBINDFAIL = 0x0000000d;
const ESME_RINVPASWD = 0x0000000e;
const ESME_RINVBNDSTS = 0x00000004;
const ESM_CLASS_SMSC_DELIVERY_RECEIPT = 0x04;

export interface ClusterSmscOptions {
  systemId?: string;
  password?: string;
  /** The carrier's limit: binds of this system_id open at once. */
  maxBinds: number;
  /** Receipt status for a destination; default DELIVRD. */
  statusFor?: (destination: string) => string;
  /** deliver_sm awaiting their response at once, over all sessions. */
  receiptWindow?: number;
  /** deliver_sm awaiting their response at once on one bind (a carrier's window per bind). */
  receiptWindowPerBind?: number;
  /** A deliver_sm unanswered this long is given up on that bind and offered again. */
  receiptResponseTimeoutMs?: number;
}

interface BoundSession {
  id: number;
  session: Session;
  bound: boolean;
  /** deliver_sm sent on this bind awaiting their response. */
  receiptsInFlight: number;
}

interface StoredReceipt {
  messageId: string;
  destination: string;
  stat: string;
  /** The session that submitted the message: the receipt goes to another one when it can. */
  submittedOn: number;
  dueAt: number;
}

export class ClusterSmsc {
  readonly submitsByDestination = new Map<string, number>();
  /** Bind attempts refused because the limit was reached. */
  bindsRefused = 0;
  /** When each refused bind came, from which local port, and the ports bound at that moment. */
  readonly refusedBinds: { atMs: number; remotePort: number; boundPorts: number[] }[] = [];
  /** The most binds open at once over the whole run. */
  maxConcurrentBinds = 0;
  submitCount = 0;
  receiptsAcknowledged = 0;
  /** Receipts acknowledged on a session other than the submitting one. */
  receiptsOnOtherBind = 0;
  /** deliver_sm given up on after receiptResponseTimeoutMs without a response. */
  receiptTimeouts = 0;
  /** The destination of every message id this SMSC gave out. */
  readonly destinationByMessageId = new Map<string, string>();
  /** Every submit accepted: its destination, the client's TCP port (which process sent it), when. */
  readonly submitLog: { destination: string; remotePort: number; atMs: number }[] = [];
  private readonly sessions = new Map<number, BoundSession>();
  /** Where the round of binds carrying receipts stands (a session id). */
  private lastReceiptSessionId = 0;
  private nextSessionId = 1;
  private nextMessageId = 7_000_000;
  /** FIFO of receipts to offer; `head` avoids Array.shift's O(n). */
  private receipts: StoredReceipt[] = [];
  private head = 0;
  private inFlight = 0;
  /** Submit acceptance times (ms), for the per-second rate check. */
  private readonly submitTimesMs: number[] = [];
  private readonly pump: NodeJS.Timeout;
  /**
   * How late this process's event loop ran: the carrier lives in the test's process, so a test that
   * blocks it (a long synchronous loop) delays every answer, enquire_link_resp included, and the
   * nodes drop their binds and bind again. Printed with a cluster test's figures.
   */
  private readonly loopDelay: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });
  private stopped = false;
  private port = 0;
  private readonly options: Required<ClusterSmscOptions>;

  private constructor(
    private readonly server: Server,
    options: ClusterSmscOptions,
  ) {
    this.options = {
      systemId: options.systemId ?? 'esme',
      password: options.password ?? 'secret',
      maxBinds: options.maxBinds,
      statusFor: options.statusFor ?? (() => 'DELIVRD'),
      receiptWindow: options.receiptWindow ?? 128,
      receiptWindowPerBind: options.receiptWindowPerBind ?? 64,
      receiptResponseTimeoutMs: options.receiptResponseTimeoutMs ?? 10_000,
    };
    this.pump = setInterval(() => this.offer(), 2);
    this.loopDelay.enable();
  }

  /** The longest this process's event loop went without a turn since the carrier started (ms). */
  get longestStallMs(): number {
    return Math.round(this.loopDelay.max / 1e6);
  }

  static async start(options: ClusterSmscOptions): Promise<ClusterSmsc> {
    const server = smpp.createServer({});
    const smsc = new ClusterSmsc(server, options);
    server.on('session', (session: Session) => smsc.onSession(session));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    smsc.port = (server.address() as AddressInfo).port;
    return smsc;
  }

  get address(): { host: string; port: number } {
    return { host: '127.0.0.1', port: this.port };
  }

  /** The carrier changes the account's bind limit (binds already open stay). */
  setMaxBinds(maxBinds: number): void {
    this.options.maxBinds = maxBinds;
  }

  get boundCount(): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.bound) n++;
    return n;
  }

  /** Destinations that received more than one submit, and how many extra submits in all. */
  duplicates(): { destinations: number; extraSubmits: number } {
    let destinations = 0;
    let extraSubmits = 0;
    for (const count of this.submitsByDestination.values()) {
      if (count > 1) {
        destinations++;
        extraSubmits += count - 1;
      }
    }
    return { destinations, extraSubmits };
  }

  /** The most submits accepted within any window of windowMs (sliding, exact). */
  maxSubmitsWithin(windowMs = 1_000): number {
    const times = this.submitTimesMs;
    let best = 0;
    let start = 0;
    for (let end = 0; end < times.length; end++) {
      while ((times[end] as number) - (times[start] as number) >= windowMs) start++;
      best = Math.max(best, end - start + 1);
    }
    return best;
  }

  /** The client-side (remote) TCP ports of the sessions bound now: which process holds a bind. */
  boundRemotePorts(): number[] {
    return [...this.sessions.values()].filter((s) => s.bound).map((s) => s.session.socket.remotePort ?? -1);
  }

  /** Receipts not yet acknowledged. */
  get receiptsOutstanding(): number {
    return this.receipts.length - this.head + this.inFlight;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pump);
    this.loopDelay.disable();
    for (const s of this.sessions.values()) s.session.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onSession(session: Session): void {
    const info: BoundSession = { id: this.nextSessionId++, session, bound: false, receiptsInFlight: 0 };
    this.sessions.set(info.id, info);
    session.socket.setNoDelay(true);
    // One close listener per deliver_sm in flight is expected, not a leak.
    session.socket.setMaxListeners(this.options.receiptWindow + 16);
    session.on('pdu', (pdu: PDU) => this.onPdu(info, pdu));
    session.on('error', () => undefined);
    session.on('close', () => this.sessions.delete(info.id));
  }

  private onPdu(info: BoundSession, pdu: PDU): void {
    switch (pdu.command) {
      case 'bind_transceiver':
      case 'bind_transmitter':
      case 'bind_receiver':
        this.onBind(info, pdu);
        return;
      case 'submit_sm':
        this.onSubmit(info, pdu);
        return;
      case 'enquire_link':
        info.session.send(pdu.response());
        return;
      case 'unbind':
        info.session.send(pdu.response());
        info.bound = false;
        return;
      default:
        return;
    }
  }

  private onBind(info: BoundSession, pdu: PDU): void {
    if (pdu['system_id'] !== this.options.systemId || pdu['password'] !== this.options.password) {
      info.session.send(pdu.response({ command_status: ESME_RINVPASWD }));
      setTimeout(() => info.session.close(), 10);
      return;
    }
    if (this.boundCount >= this.options.maxBinds) {
      this.bindsRefused++;
      this.refusedBinds.push({ atMs: Date.now(), remotePort: info.session.socket.remotePort ?? -1, boundPorts: this.boundRemotePorts() });
      info.session.send(pdu.response({ command_status: ESME_RBINDFAIL }));
      setTimeout(() => info.session.close(), 10);
      return;
    }
    info.bound = true;
    this.maxConcurrentBinds = Math.max(this.maxConcurrentBinds, this.boundCount);
    info.session.send(pdu.response({ system_id: 'ClusterSMSC' }));
  }

  private onSubmit(info: BoundSession, pdu: PDU): void {
    if (!info.bound) {
      info.session.send(pdu.response({ command_status: ESME_RINVBNDSTS }));
      return;
    }
    this.submitCount++;
    const now = Date.now();
    this.submitTimesMs.push(now);
    const destination = String(pdu['destination_addr']);
    this.submitsByDestination.set(destination, (this.submitsByDestination.get(destination) ?? 0) + 1);
    const messageId = String(this.nextMessageId++);
    this.destinationByMessageId.set(messageId, destination);
    this.submitLog.push({ destination, remotePort: info.session.socket.remotePort ?? -1, atMs: now });
    info.session.send(pdu.response({ message_id: messageId }));
    this.receipts.push({ messageId, destination, stat: this.options.statusFor(destination), submittedOn: info.id, dueAt: now });
  }

  /**
   * The bound session to carry a receipt: another than the submitter's when one with room in its
   * window is bound, the binds taking turns (after the one that carried the last receipt).
   */
  private sessionFor(receipt: StoredReceipt): BoundSession | undefined {
    const open = [...this.sessions.values()].filter((s) => s.bound && s.receiptsInFlight < this.options.receiptWindowPerBind);
    const after = open.filter((s) => s.id > this.lastReceiptSessionId);
    const inTurn = [...after, ...open.filter((s) => s.id <= this.lastReceiptSessionId)];
    const chosen = inTurn.find((s) => s.id !== receipt.submittedOn) ?? inTurn[0];
    if (chosen !== undefined) this.lastReceiptSessionId = chosen.id;
    return chosen;
  }

  private offer(): void {
    const now = Date.now();
    while (!this.stopped && this.inFlight < this.options.receiptWindow && this.head < this.receipts.length) {
      const receipt = this.receipts[this.head] as StoredReceipt;
      // A receipt offered again waits 200 ms at the head; FIFO keeps this O(1) per receipt.
      if (receipt.dueAt > now) return;
      const target = this.sessionFor(receipt);
      if (target === undefined) return;
      this.head++;
      if (this.head > 4_096 && this.head * 2 > this.receipts.length) {
        this.receipts = this.receipts.slice(this.head);
        this.head = 0;
      }
      this.send(target, receipt);
    }
  }

  private send(target: BoundSession, receipt: StoredReceipt): void {
    this.inFlight++;
    target.receiptsInFlight++;
    const stamp = '2611231200';
    const text = `id:${receipt.messageId} sub:001 dlvrd:001 submit date:${stamp} done date:${stamp} stat:${receipt.stat} err:000 text:`;
    const pdu = new smpp.PDU('deliver_sm', {
      source_addr_ton: 1,
      source_addr_npi: 1,
      source_addr: receipt.destination,
      esm_class: ESM_CLASS_SMSC_DELIVERY_RECEIPT,
      data_coding: 0,
      short_message: Buffer.from(text, 'latin1'),
    });
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (acknowledged: boolean): void => {
      if (settled) return;
      settled = true;
      this.inFlight--;
      target.receiptsInFlight--;
      clearTimeout(timer);
      target.session.socket.off('close', onClose);
      if (acknowledged) {
        this.receiptsAcknowledged++;
        if (target.id !== receipt.submittedOn) this.receiptsOnOtherBind++;
        return;
      }
      // Not acknowledged (link lost or an error status): kept and offered again, as an SMSC does.
      this.receipts.push({ ...receipt, dueAt: Date.now() + 200 });
    };
    const onClose = (): void => settle(false);
    target.session.socket.once('close', onClose);
    // A late deliver_sm_resp after this is ignored (settled): the receipt is on offer again already.
    timer = setTimeout(() => {
      if (settled) return;
      this.receiptTimeouts++;
      settle(false);
    }, this.options.receiptResponseTimeoutMs);
    const sent = target.session.send(pdu, (response: PDU) => settle(response.command_status === 0));
    if (!sent) settle(false);
  }
}
