/**
 * The bench's customer: one bind to smsgate's SMPP server on the `smpp` npm package (a fast
 * client, so the figures are smsgate's), `window` submit_sm in flight, every deliver_sm answered
 * at once. Records when each submit_sm_resp and each receipt arrived (monotonic ms).
 */
import smpp from 'smpp';
import type { PDU, Session } from 'smpp';
import { monoMs } from '../e2e/clock.js';

/** SMPP 3.4 §5.2.12: esm_class bits 2-5 = 0001, an SMSC delivery receipt. */
const ESM_CLASS_RECEIPT = 0x04;
const ESM_CLASS_TYPE_MASK = 0x3c;

export interface CustomerProgress {
  sent: number;
  accepted: number;
  /** submit_sm_resp with a non-zero status, by status. */
  refused: Map<number, number>;
  receipts: number;
  firstSubmitAtMs: number;
  lastAcceptedAtMs: number;
  firstReceiptAtMs: number;
  lastReceiptAtMs: number;
}

export class BenchCustomer {
  readonly progress: CustomerProgress = {
    sent: 0, accepted: 0, refused: new Map(), receipts: 0, firstSubmitAtMs: 0, lastAcceptedAtMs: 0, firstReceiptAtMs: 0, lastReceiptAtMs: 0,
  };
  private closedReason: string | undefined;

  private constructor(private readonly session: Session) {
    session.on('pdu', (pdu: PDU) => this.onPdu(pdu));
    session.on('close', () => {
      this.closedReason ??= 'the SMPP server closed the connection';
    });
    session.on('error', (err: Error) => {
      this.closedReason = `SMPP connection error: ${err.message}`;
    });
  }

  /** Connects and binds as a transceiver; throws with the bind_transceiver_resp status when refused. */
  static async bind(host: string, port: number, systemId: string, password: string, timeoutMs = 10_000): Promise<BenchCustomer> {
    const session = await new Promise<Session>((resolve, reject) => {
      const s = smpp.connect({ host, port });
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`no connection to ${host}:${port} within ${timeoutMs} ms`));
      }, timeoutMs);
      s.once('error', (err: Error) => {
        clearTimeout(timer);
        reject(new Error(`cannot connect to smsgate's SMPP server at ${host}:${port}: ${err.message}`));
      });
      s.once('connect', () => {
        clearTimeout(timer);
        s.socket.setNoDelay(true);
        resolve(s);
      });
    });
    const status = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no bind_transceiver_resp within ${timeoutMs} ms`)), timeoutMs);
      session.send(new smpp.PDU('bind_transceiver', { system_id: systemId, password, interface_version: 0x34 }), (resp: PDU) => {
        clearTimeout(timer);
        resolve(resp.command_status);
      });
    });
    if (status !== 0) {
      session.destroy();
      throw new Error(`bind_transceiver of ${systemId} refused with status 0x${status.toString(16)}`);
    }
    return new BenchCustomer(session);
  }

  /** Why the session ended, or undefined while it is up. */
  get closed(): string | undefined {
    return this.closedReason;
  }

  /**
   * Sends `count` submit_sm, `window` in flight at once (the next goes as a response frees a
   * slot); resolves when every one is answered.
   */
  submitAll(count: number, window: number, fieldsFor: (index: number) => Record<string, unknown>): Promise<void> {
    const p = this.progress;
    p.firstSubmitAtMs = monoMs();
    return new Promise((resolve, reject) => {
      let answered = 0;
      const sendNext = (): void => {
        if (p.sent >= count) return;
        const index = p.sent++;
        const sent = this.session.send(new smpp.PDU('submit_sm', fieldsFor(index)), (resp: PDU) => {
          answered++;
          if (resp.command_status === 0) {
            p.accepted++;
            p.lastAcceptedAtMs = monoMs();
          } else {
            p.refused.set(resp.command_status, (p.refused.get(resp.command_status) ?? 0) + 1);
          }
          if (answered === count) resolve();
          else sendNext();
        });
        if (!sent) reject(new Error(`submit_sm ${index} not sent: ${this.closedReason ?? 'the socket is not writable'}`));
      };
      for (let i = 0; i < Math.min(window, count); i++) sendNext();
    });
  }

  async unbind(): Promise<void> {
    if (this.closedReason !== undefined) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 5_000);
      this.session.send(new smpp.PDU('unbind', {}), () => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.session.destroy();
  }

  destroy(): void {
    this.session.destroy();
  }

  private onPdu(pdu: PDU): void {
    if (pdu.command === 'deliver_sm') {
      this.session.send(pdu.response());
      if ((Number(pdu['esm_class']) & ESM_CLASS_TYPE_MASK) !== ESM_CLASS_RECEIPT) return;
      const p = this.progress;
      const now = monoMs();
      if (p.receipts === 0) p.firstReceiptAtMs = now;
      p.receipts++;
      p.lastReceiptAtMs = now;
    } else if (pdu.command === 'enquire_link') {
      this.session.send(pdu.response());
    } else if (pdu.command === 'unbind') {
      this.session.send(pdu.response());
      this.closedReason = 'the SMPP server unbound';
    }
  }
}
