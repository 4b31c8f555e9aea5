/**
 * Runs test/support/perl-esme/esme.pl (a customer ESME on Perl's Net::SMPP, Debian libnet-smpp-perl)
 * as a child process, one process a session, and reads its JSON-lines log: a third-party SMPP
 * client for smsgate's SMPP server. Also builds the submit_sm a customer sends for a long message
 * in each way customers cut one (customer-cut.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { killPeer, spawnPeer } from '../peer-process.js';
import type { EsmeSubmit } from './customer-cut.js';

export type EsmeBindType = 'transmitter' | 'receiver' | 'transceiver';

export interface PerlEsmeOptions {
  host: string;
  port: number;
  bind: EsmeBindType;
  systemId: string;
  password: string;
  systemType?: string;
  /** command_status of every deliver_sm_resp until setDeliverStatus (default 0: acknowledged). */
  deliverStatus?: number;
  /** Seconds after which the ESME exits by itself (default 600). */
  maxRuntimeS?: number;
}

/** One line of the ESME's log; `event` names it. */
export interface PerlEsmeEvent {
  event: string;
  [field: string]: unknown;
}

export interface SubmitResp {
  ref: string;
  seq: number;
  status: number;
  messageId: string;
}

/** A deliver_sm the ESME received (and answered with `answered`). */
export interface EsmeDelivery {
  seq: number;
  answered: number;
  esmClass: number;
  dataCoding: number;
  sourceAddr: string;
  destinationAddr: string;
  shortMessage: Buffer;
  /** Raw TLV values by tag. */
  tlvs: ReadonlyMap<number, Buffer>;
}

/** A delivery receipt (SMPP 3.4 Appendix B text and the §5.3.2.12 / §5.3.2.35 TLVs) as the customer reads it. */
export interface EsmeReceipt {
  /** `id:` of the text. */
  id: string;
  /** `stat:` of the text. */
  stat: string;
  /** TLV 0x001E receipted_message_id (its C-string terminator removed), when sent. */
  receiptedMessageId: string | undefined;
  /** TLV 0x0427 message_state, when sent. */
  messageState: number | undefined;
  delivery: EsmeDelivery;
}

/** SMPP 3.4 §5.2.12: esm_class bits 2-5 = 0001, an SMSC delivery receipt. */
export const ESM_CLASS_DELIVERY_RECEIPT = 0x04;
const TLV_RECEIPTED_MESSAGE_ID = 0x001e;
const TLV_MESSAGE_STATE = 0x0427;
const POLL_MS = 10;

/** The script beside this module; from the compiled copy in dist/, the one in the source tree. */
function scriptPath(): string {
  const beside = fileURLToPath(new URL('./esme.pl', import.meta.url));
  return existsSync(beside) ? beside : fileURLToPath(new URL('../../../../test/support/perl-esme/esme.pl', import.meta.url));
}

export class PerlEsme {
  readonly events: PerlEsmeEvent[] = [];
  readonly stderr: string[] = [];
  private nextRef = 1;

  private constructor(
    private readonly child: ChildProcess,
    readonly options: PerlEsmeOptions,
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => this.events.push(JSON.parse(line) as PerlEsmeEvent));
    child.stderr!.on('data', (chunk: Buffer) => this.stderr.push(chunk.toString('utf8')));
  }

  /** Connects and sends the bind; resolves once the bind_resp came (see bindStatus), whatever its status. */
  static async connect(options: PerlEsmeOptions, timeoutMs = 10_000): Promise<PerlEsme> {
    const args = [
      scriptPath(), '--host', options.host, '--port', String(options.port), '--bind', options.bind,
      '--system-id', options.systemId, '--password', options.password, '--system-type', options.systemType ?? '',
      '--deliver-status', String(options.deliverStatus ?? 0), '--max-runtime-s', String(options.maxRuntimeS ?? 600),
      // setpriv execs perl, so this process is its parent.
      '--parent-pid', String(process.pid),
    ];
    const esme = new PerlEsme(spawnPeer('perl', args, { stdio: ['pipe', 'pipe', 'pipe'] }), options);
    try {
      await esme.waitUntil(() => esme.eventsOf('bind_resp').length > 0 || esme.eventsOf('closed').length > 0, timeoutMs, 'the bind_resp');
    } catch (err) {
      await esme.stop();
      throw err;
    }
    return esme;
  }

  /** Connects and binds; throws unless the bind was accepted (status 0). */
  static async bind(options: PerlEsmeOptions, timeoutMs = 10_000): Promise<PerlEsme> {
    const esme = await PerlEsme.connect(options, timeoutMs);
    if (esme.bindStatus !== 0) {
      await esme.stop();
      throw new Error(`${options.bind} bind of ${options.systemId} refused: status 0x${esme.bindStatus?.toString(16)}`);
    }
    return esme;
  }

  /** The bind_resp's command_status; undefined when the server closed the connection without one. */
  get bindStatus(): number | undefined {
    const resp = this.eventsOf('bind_resp')[0];
    return resp === undefined ? undefined : Number(resp['status']);
  }

  /** The process has exited (unbound, closed by the server, or stopped). */
  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  eventsOf(name: string): PerlEsmeEvent[] {
    return this.events.filter((event) => event.event === name);
  }

  /** Sends one submit_sm; returns its ref (given, or numbered). */
  submit(sm: EsmeSubmit): string {
    const ref = sm.ref ?? `m${this.nextRef++}`;
    this.command({ submit_sm: { ...sm, ref } });
    return ref;
  }

  /** Sends each submit_sm (all at once: the window is the server's to enforce) and waits for every response. */
  async submitAll(sms: readonly EsmeSubmit[], timeoutMs = 20_000): Promise<SubmitResp[]> {
    const refs = sms.map((sm) => this.submit(sm));
    await this.waitUntil(() => refs.every((ref) => this.respOf(ref) !== undefined), timeoutMs, `${refs.length} submit_sm_resp`);
    return refs.map((ref) => this.respOf(ref) as SubmitResp);
  }

  /** Every submit_sm_resp so far, in arrival order. */
  submitResps(): SubmitResp[] {
    return this.eventsOf('submit_sm_resp').map((event) => ({
      ref: String(event['ref']), seq: Number(event['seq']), status: Number(event['status']), messageId: String(event['message_id']),
    }));
  }

  respOf(ref: string): SubmitResp | undefined {
    return this.submitResps().find((resp) => resp.ref === ref);
  }

  /** Every deliver_sm received, in arrival order. */
  deliveries(): EsmeDelivery[] {
    return this.eventsOf('deliver_sm').map((event) => ({
      seq: Number(event['seq']),
      answered: Number(event['answered']),
      esmClass: Number(event['esm_class']),
      dataCoding: Number(event['data_coding']),
      sourceAddr: String(event['source_addr']),
      destinationAddr: String(event['destination_addr']),
      shortMessage: Buffer.from(String(event['short_message']), 'hex'),
      tlvs: new Map(Object.entries((event['tlvs'] ?? {}) as Record<string, string>).map(([tag, hex]) => [Number(tag), Buffer.from(hex, 'hex')])),
    }));
  }

  /** The deliveries that are receipts (esm_class 0x04), read. */
  receipts(): EsmeReceipt[] {
    return this.deliveries().filter((d) => (d.esmClass & 0x3c) === ESM_CLASS_DELIVERY_RECEIPT).map(readReceipt);
  }

  /** Receipts acknowledged (answered 0), one per receipted message id: what the customer has for good. */
  acknowledgedReceiptIds(): Set<string> {
    return new Set(this.receipts().filter((r) => r.delivery.answered === 0).map((r) => r.receiptedMessageId ?? r.id));
  }

  /** Answers the deliver_sm that follow with this command_status (0 acknowledges). */
  async setDeliverStatus(status: number, timeoutMs = 5_000): Promise<void> {
    const before = this.eventsOf('deliver_status').length;
    this.command({ deliver_status: status });
    await this.waitUntil(() => this.eventsOf('deliver_status').length > before, timeoutMs, 'the deliver status to change');
  }

  /** Sends unbind and waits for the process to exit on unbind_resp; returns the unbind_resp status. */
  async unbind(timeoutMs = 10_000): Promise<number> {
    this.command({ unbind: true });
    await this.waitUntil(() => this.eventsOf('unbind_resp').length > 0, timeoutMs, 'the unbind_resp');
    if (!this.exited) await once(this.child, 'exit');
    return Number(this.eventsOf('unbind_resp')[0]?.['status']);
  }

  /** Polls until the condition holds; rejects after timeoutMs or when the ESME died before it held. */
  async waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (condition()) return;
      if (this.exited) {
        // Its last lines may still be in the pipe: one more look after they are read.
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        if (condition()) return;
        throw new Error(`esme.pl (${this.options.systemId}) exited while waiting for ${what}: ${this.tail()}`);
      }
      if (Date.now() > deadline) throw new Error(`esme.pl (${this.options.systemId}): timed out after ${timeoutMs} ms waiting for ${what}: ${this.tail()}`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** Kills the session without an unbind (as a customer's crash or a lost link). */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = once(this.child, 'exit');
    killPeer(this.child, 'SIGKILL');
    await exited;
  }

  private command(command: unknown): void {
    if (this.exited) throw new Error(`esme.pl (${this.options.systemId}) has exited: ${this.tail()}`);
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
  }

  private tail(): string {
    return `${this.events.slice(-5).map((e) => JSON.stringify(e)).join(' ')} ${this.stderr.join('').slice(-500)}`;
  }
}

/** The receipt text's fields (SMPP 3.4 Appendix B) and TLVs. */
export function readReceipt(delivery: EsmeDelivery): EsmeReceipt {
  const text = delivery.shortMessage.toString('latin1');
  const tlvId = delivery.tlvs.get(TLV_RECEIPTED_MESSAGE_ID);
  const state = delivery.tlvs.get(TLV_MESSAGE_STATE);
  return {
    id: /(?:^|\s)id:(\S*)/.exec(text)?.[1] ?? '',
    stat: /(?:^|\s)stat:(\S*)/.exec(text)?.[1] ?? '',
    receiptedMessageId: tlvId === undefined ? undefined : tlvId.toString('latin1').replace(/\0+$/, ''),
    messageState: state === undefined || state.length === 0 ? undefined : state.readUInt8(0),
    delivery,
  };
}
