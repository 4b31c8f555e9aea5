/**
 * Runs test/support/perl-smsc/smsc.pl (an SMSC on Perl's Net::SMPP, Debian libnet-smpp-perl) as
 * a child process and reads its JSON-lines log: a third-party SMPP peer for SmppTransport tests.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { killPeer, spawnPeer } from '../peer-process.js';

export interface PerlSmscOptions {
  systemId?: string;
  password?: string;
  idFormat?: 'decimal' | 'hex';
  /** text: receipt text only; tlv: plus receipted_message_id and message_state; none: no receipts. */
  receipt?: 'text' | 'tlv' | 'none';
  /** Seconds after which the SMSC exits by itself (default 600). */
  maxRuntimeS?: number;
  /** esm_class of the receipts it sends (default 0x04; 0 sends them as ordinary messages). */
  receiptEsmClass?: number;
}

/** One line of the SMSC's log; `event` names it (listening, bind, submit_sm, receipt, unbind...). */
export interface PerlSmscEvent {
  event: string;
  [field: string]: unknown;
}

/** A submit_sm as the Perl SMSC decoded it. */
export interface PerlSubmit extends PerlSmscEvent {
  event: 'submit_sm';
  message_id: string;
  source_addr: string;
  source_addr_ton: number;
  source_addr_npi: number;
  destination_addr: string;
  dest_addr_ton: number;
  dest_addr_npi: number;
  esm_class: number;
  data_coding: number;
  registered_delivery: number;
  /** Hex of the short_message octets. */
  short_message: string;
  /** Raw TLV values in hex, by tag ('0x020C'). */
  tlvs: Record<string, string>;
}

/** A mobile-originated deliver_sm for the SMSC to send (octets as hex). */
export interface PerlMo {
  source_addr: string;
  destination_addr: string;
  esm_class?: number;
  data_coding?: number;
  short_message?: string;
  /** sar_msg_ref_num, sar_total_segments, sar_segment_seqnum. */
  sar?: [number, number, number];
  message_payload?: string;
}

/** The script beside this module; from the compiled copy in dist/, the one in the source tree. */
function scriptPath(): string {
  const beside = fileURLToPath(new URL('./smsc.pl', import.meta.url));
  return existsSync(beside) ? beside : fileURLToPath(new URL('../../../../test/support/perl-smsc/smsc.pl', import.meta.url));
}

export class PerlSmsc {
  readonly events: PerlSmscEvent[] = [];
  readonly stderr: string[] = [];

  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => this.events.push(JSON.parse(line) as PerlSmscEvent));
    child.stderr!.on('data', (chunk: Buffer) => this.stderr.push(chunk.toString('utf8')));
  }

  static async start(options: PerlSmscOptions = {}): Promise<PerlSmsc> {
    const args = [
      scriptPath(), '--port', '0',
      '--system-id', options.systemId ?? 'esme', '--password', options.password ?? 'secret',
      '--id-format', options.idFormat ?? 'decimal', '--receipt', options.receipt ?? 'text',
      '--receipt-esm-class', String(options.receiptEsmClass ?? 0x04), '--max-runtime-s', String(options.maxRuntimeS ?? 600),
      // setpriv execs perl, so this process is its parent.
      '--parent-pid', String(process.pid),
    ];
    const smsc = new PerlSmsc(spawnPeer('perl', args, { stdio: ['pipe', 'pipe', 'pipe'] }));
    try {
      await smsc.waitFor('listening', 10_000);
    } catch (err) {
      await smsc.stop();
      throw err;
    }
    return smsc;
  }

  /** The port from the first log line. */
  get port(): number {
    return Number(this.events.find((event) => event.event === 'listening')?.['port'] ?? 0);
  }

  /** Resolves when `count` events of that name have been logged; rejects after timeoutMs or if the SMSC exits. */
  async waitFor(name: string, timeoutMs = 10_000, count = 1): Promise<PerlSmscEvent[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.eventsOf(name);
      if (found.length >= count) return found;
      if (this.child.exitCode !== null) throw new Error(`smsc.pl exited (${this.child.exitCode}): ${this.stderr.join('')}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} ${name} from smsc.pl`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  get address(): { host: string; port: number } {
    return { host: '127.0.0.1', port: this.port };
  }

  eventsOf(name: string): PerlSmscEvent[] {
    return this.events.filter((event) => event.event === name);
  }

  /**
   * The submit_sm lines once `count` have been logged. The log is a pipe separate from the
   * socket, so a response can reach the test before the line that logged its request: tests
   * wait for the lines rather than read them right after a round trip.
   */
  async waitForSubmits(count: number, timeoutMs = 10_000): Promise<PerlSubmit[]> {
    return (await this.waitFor('submit_sm', timeoutMs, count)) as PerlSubmit[];
  }

  /** Sends a deliver_sm (MO) to the bound receiver; resolves once it is on its way (its `mo` line logged). */
  async deliverMo(mo: PerlMo, timeoutMs = 10_000): Promise<void> {
    const before = this.eventsOf('mo').length;
    this.child.stdin!.write(`${JSON.stringify({ deliver_sm: mo })}\n`);
    await this.waitFor('mo', timeoutMs, before + 1);
  }

  /** The SMSC's process id (for tests of its own lifetime). */
  get pid(): number {
    return this.child.pid ?? -1;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    killPeer(this.child, 'SIGTERM');
    await exited;
  }
}
