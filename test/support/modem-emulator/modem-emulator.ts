/**
 * An emulated GSM modem that speaks AT (ITU-T V.250, 3GPP TS 27.007 and TS 27.005 in PDU mode)
 * over a real pty pair made by socat. Every PDU it receives after AT+CMGS is decoded with
 * src/pdu; a malformed one is recorded in `protocolErrors` (tests assert it stays empty).
 *
 * Faults it can inject: +CMS errors on the next submits, a missing '> ' prompt, unsolicited noise
 * in the middle of responses, a slow network registration, and an unplug (socat killed).
 */
import { SerialPort } from 'serialport';
import { decodeCmgsPdu, type DecodedSubmit } from '../../../src/pdu/index.js';
import { buildDeliverPdu, buildStatusReportPdu } from './pdu-builders.js';
import { createPtyPair, type PtyPair } from './pty-pair.js';

export interface EmulatorTiming {
  /** Time from the Ctrl-Z to '+CMGS: <mr>' as [min, max] ms (a real network takes 2-4 s). */
  submitDelayMs: readonly [number, number];
  /** Time after power-on before +CREG reports registered (stat 1 or 5). */
  registrationDelayMs: number;
  /** Time from +CMGS to the status report. */
  statusReportDelayMs: number;
}

export interface EmulatorOptions {
  /** Where socat puts the links: `${dir}/${name}.modem` and `${dir}/${name}` (the client's path). */
  dir: string;
  /** Messages each storage ("SM", "ME") holds; a message arriving at a full one waits in the network until one is deleted. Default 30. */
  storageCapacity?: number;
  name: string;
  timing?: Partial<EmulatorTiming>;
  /** SIM PIN; when set the SIM starts locked ('+CPIN: SIM PIN'). */
  pin?: string;
  smsc?: string;
  /** +CREG stat once registered: 1 home, 5 roaming. */
  registrationStat?: 1 | 5;
  /** TP-ST of the status reports it sends (default 0x00, delivered). */
  reportStatus?: number;
  /** Whether it sends status reports at all when TP-SRR asks (default true). */
  statusReports?: boolean;
  identity?: { manufacturer: string; model: string; revision: string; imei: string; imsi: string };
  operator?: string;
  /** +CSQ rssi (0..31, 99 unknown). */
  rssi?: number;
  /** First TP-MR it hands out (to test wrap-around). */
  firstMessageReference?: number;
  /** Commands (prefixes, e.g. 'AT+CNMI') it answers with a bare ERROR, like a minimal modem. */
  refuseCommands?: readonly string[];
  /** Answer AT+CGMI/CGMM/CGMR/CGSN as '+CGSN: "..."' (some firmwares do) instead of a bare line. */
  prefixedIdentity?: boolean;
  /** Text after +CMGS: <mr>, e.g. ',"26/11/21,10:00:00+00"' as some modems add. */
  cmgsSuffix?: string;
}

export interface ReceivedSubmit {
  messageReference: number;
  pdu: DecodedSubmit;
  hex: string;
}

interface StoredMessage {
  status: 'REC UNREAD' | 'REC READ';
  hex: string;
  tpduOctets: number;
}

const DEFAULT_TIMING: EmulatorTiming = { submitDelayMs: [0, 0], registrationDelayMs: 0, statusReportDelayMs: 5 };
const CTRL_Z = '\x1a';
const ESC = '\x1b';

/** TS 27.007 §8.5 +CSQ, §7.2 +CREG, §7.3 +COPS; TS 27.005 §3.3 +CSCA, §3.4.1 +CNMI answers. */
export class ModemEmulator {
  readonly received: ReceivedSubmit[] = [];
  readonly protocolErrors: string[] = [];
  readonly commands: string[] = [];
  /** Count of AT+CNMA acknowledgements received. */
  cnmaCount = 0;
  readonly deleted: number[] = [];

  private pty: PtyPair | null = null;
  private port: SerialPort | null = null;
  private readonly timing: EmulatorTiming;
  private input = '';
  private echo = true;
  private cmee = 0;
  private pinLocked: boolean;
  private pduMode = false;
  private poweredAtMs = Date.now();
  private nextMr: number;
  /** TS 27.005 §3.4.1 +CNMI <mt> and <ds>. */
  private cnmiMt = 0;
  private cnmiDs = 0;
  /** TS 27.005 §3.2.2 storages; AT+CPMS="<mem1>" selects the one AT+CMGL/CMGR/CMGD address. */
  private readonly memories = new Map<string, Map<number, StoredMessage>>([['SM', new Map()], ['ME', new Map()]]);
  private readMemory = 'SM';
  /** SMS the network could not deliver because the storage was full; delivered as soon as a slot frees. */
  private readonly heldByNetwork: { memory: string; message: StoredMessage }[] = [];
  private pendingCmgs: { tpduOctets: number } | null = null;
  /** Set when a prompt was withheld: the PDU that follows is swallowed like a garbled command line. */
  private silentCmgs = false;
  private busy = false;
  private readonly queue: string[] = [];
  private failures: number[] = [];
  private submitsAwaitingAnswer = 0;
  private submitMode: 'accept' | 'temporary' | 'permanent' | 'no-response' = 'accept';
  private promptDrops = 0;
  private noise: string[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly options: EmulatorOptions) {
    this.timing = { ...DEFAULT_TIMING, ...options.timing };
    this.pinLocked = options.pin !== undefined;
    this.nextMr = options.firstMessageReference ?? 0;
  }

  /** The device path a client opens. */
  get path(): string {
    return `${this.options.dir}/${this.options.name}`;
  }

  get pluggedIn(): boolean {
    return this.pty !== null && !this.pty.closed;
  }

  /** Creates the pty pair and starts answering (a power-on). */
  async plugIn(): Promise<void> {
    this.pty = await createPtyPair(`${this.path}.modem`, this.path);
    const port = new SerialPort({ path: this.pty.modemPath, baudRate: 115200, autoOpen: false });
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    port.on('data', (chunk: Buffer) => this.onData(chunk.toString('latin1')));
    port.on('error', () => undefined);
    this.port = port;
    this.poweredAtMs = Date.now();
    this.echo = true;
    this.pduMode = false;
    this.input = '';
    this.pendingCmgs = null;
    this.pinLocked = this.options.pin !== undefined;
  }

  /** Pulls the plug: socat dies, the client's port errors and closes. */
  async unplug(): Promise<void> {
    const port = this.port;
    this.port = null;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.submitsAwaitingAnswer = 0;
    this.busy = false;
    this.queue.length = 0;
    await this.pty?.close();
    this.pty = null;
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  async close(): Promise<void> {
    await this.unplug();
  }

  /** The next `count` submits fail with +CMS ERROR: <code>. */
  failNextSubmits(code: number, count = 1): void {
    for (let i = 0; i < count; i++) this.failures.push(code);
  }

  /**
   * How every later submit is answered until changed: 'accept', 'temporary' (+CMS ERROR 42,
   * congestion), 'permanent' (+CMS ERROR 1, unassigned number) or 'no-response' (silence after the PDU).
   */
  setSubmitMode(mode: 'accept' | 'temporary' | 'permanent' | 'no-response'): void {
    this.submitMode = mode;
  }

  /** Sends a status report now, as +CDS or stored with +CDSI per the host's AT+CNMI <ds>. */
  reportStatus(messageReference: number, recipient: string, tpStatus: number): void {
    this.sendStatusReport(messageReference, recipient, new Date(), tpStatus);
  }

  /** The next `count` AT+CMGS commands get no '> ' prompt. */
  dropNextPrompts(count = 1): void {
    this.promptDrops += count;
  }

  /** Unsolicited lines sent in the middle of every response (after its first line, before the final result). */
  setNoise(lines: readonly string[]): void {
    this.noise = [...lines];
  }

  /**
   * An incoming SMS: +CMT with the PDU (CNMI mt=2) or stored in `storage` (default "SM") and
   * announced with +CMTI: "<storage>",<index> (mt=1). A full storage holds it back until a delete.
   */
  injectInbound(from: string, text: string, concat?: { reference: number; total: number; sequence: number }, options: { storage?: 'SM' | 'ME' } = {}): void {
    const pdu = buildDeliverPdu({ smsc: this.smsc, from, text, at: new Date(), ...(concat ? { concat } : {}) });
    if (this.cnmiMt === 2) this.unsolicited([`+CMT: ,${pdu.tpduOctets}`, pdu.hex]);
    else this.storeIncoming(options.storage ?? 'SM', { status: 'REC UNREAD', ...pdu }, this.cnmiMt !== 0);
  }

  /** Messages stored in one storage. */
  storedIn(memory: 'SM' | 'ME'): number {
    return this.memories.get(memory)?.size ?? 0;
  }

  /** Messages the network holds back because the storage was full. */
  get heldCount(): number {
    return this.heldByNetwork.length;
  }

  private storeIncoming(memory: string, message: StoredMessage, announce: boolean): void {
    const index = this.store(message, memory);
    if (index === null) this.heldByNetwork.push({ memory, message });
    else if (announce) this.unsolicited([`+CMTI: "${memory}",${index}`]);
  }

  private get storage(): Map<number, StoredMessage> {
    return this.memories.get(this.readMemory) as Map<number, StoredMessage>;
  }

  private releaseHeld(): void {
    const capacity = this.options.storageCapacity ?? 30;
    for (let i = 0; i < this.heldByNetwork.length; ) {
      const held = this.heldByNetwork[i] as { memory: string; message: StoredMessage };
      if ((this.memories.get(held.memory)?.size ?? 0) >= capacity) {
        i++;
        continue;
      }
      this.heldByNetwork.splice(i, 1);
      // Delivered now, so announced per the host's current AT+CNMI.
      this.storeIncoming(held.memory, held.message, this.cnmiMt !== 0);
    }
  }

  /**
   * Stores a PDU exactly as given (hex with the SMSC field; e.g. one followed by SIM record fill,
   * or one that cannot be decoded) and announces it with +CMTI or +CDSI, as a SIM record read
   * back through AT+CMGR. `tpduOctets` is what +CMGR reports as <length>.
   */
  storeRawPdu(hex: string, tpduOctets: number, announce: '+CMTI' | '+CDSI'): number {
    const index = this.store({ status: 'REC UNREAD', hex, tpduOctets }, 'SM');
    if (index === null) throw new Error('the emulated SIM storage "SM" is full');
    this.unsolicited([`${announce}: "SM",${index}`]);
    return index;
  }

  /** Submit PDUs read whole after AT+CMGS, answered or not (the conformance suite waits on it). */
  submitPdusReceived = 0;

  /** True while a submit's PDU is in and its +CMGS answer not yet out (the moment an unplug loses a result). */
  get submitInProgress(): boolean {
    return this.submitsAwaitingAnswer > 0;
  }

  /** Messages still stored on the emulated SIM. */
  get storedCount(): number {
    let count = 0;
    for (const memory of this.memories.values()) count += memory.size;
    return count;
  }

  private get smsc(): string {
    return this.options.smsc ?? '353870000000';
  }

  /** The index it was stored at, or null when that storage is full. */
  private store(message: StoredMessage, memory = 'SM'): number | null {
    const target = this.memories.get(memory) as Map<number, StoredMessage>;
    if (target.size >= (this.options.storageCapacity ?? 30)) return null;
    let index = 1;
    while (target.has(index)) index++;
    target.set(index, message);
    return index;
  }

  private write(text: string): void {
    this.port?.write(text);
  }

  private unsolicited(lines: readonly string[]): void {
    // A URC waits while a response is being written, as a real TA buffers it (TS 27.007 §4.1 note).
    this.write(lines.map((l) => `\r\n${l}\r\n`).join(''));
  }

  private later(delayMs: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, delayMs);
    this.timers.add(timer);
  }

  private onData(text: string): void {
    for (const ch of text) {
      if (this.pendingCmgs !== null) {
        if (ch === CTRL_Z) this.finishCmgs(this.input.trim());
        else if (ch === ESC) {
          this.pendingCmgs = null;
          this.silentCmgs = false;
          this.input = '';
          this.respond([], 'OK');
        } else this.input += ch;
        continue;
      }
      if (ch === CTRL_Z || ch === ESC) {
        // Outside a send these cancel nothing (gammu sends ESC first to reset a half-typed send).
        this.input = '';
        continue;
      }
      if (ch === '\r') {
        const line = this.input;
        this.input = '';
        if (this.echo) this.write(`${line}\r`);
        if (line.trim() !== '') this.enqueue(line.trim());
      } else if (ch !== '\n') {
        this.input += ch;
      }
    }
  }

  private enqueue(line: string): void {
    this.queue.push(line);
    if (!this.busy) this.drain();
  }

  private drain(): void {
    const line = this.queue.shift();
    if (line === undefined || this.pendingCmgs !== null) return;
    this.commands.push(line);
    this.execute(line);
  }

  private respond(info: readonly string[], final: string): void {
    let out = '';
    info.forEach((line, i) => {
      out += `\r\n${line}\r\n`;
      if (i === 0) for (const noise of this.noise) out += `\r\n${noise}\r\n`;
    });
    if (info.length === 0) for (const noise of this.noise) out += `\r\n${noise}\r\n`;
    out += `\r\n${final}\r\n`;
    this.write(out);
    this.busy = false;
    if (this.queue.length > 0) this.drain();
  }

  private cmsError(code: number): string {
    return this.cmee === 2 ? `+CMS ERROR: ${CMS_VERBOSE[code] ?? code}` : this.cmee === 1 ? `+CMS ERROR: ${code}` : 'ERROR';
  }

  private cmeError(code: number): string {
    return this.cmee === 2 ? `+CME ERROR: ${CME_VERBOSE[code] ?? code}` : this.cmee === 1 ? `+CME ERROR: ${code}` : 'ERROR';
  }

  private registered(): boolean {
    return !this.pinLocked && Date.now() - this.poweredAtMs >= this.timing.registrationDelayMs;
  }

  private execute(raw: string): void {
    const upper = raw.toUpperCase();
    if (!upper.startsWith('AT')) return this.respond([], 'ERROR');
    const body = raw.slice(2);
    const command = body.toUpperCase();
    const identity = this.options.identity ?? {
      manufacturer: 'SMSGATE', model: 'EMULATED-MODEM', revision: 'EMU 1.0', imei: '356938035643809', imsi: '272011234567890',
    };
    this.busy = true;
    if (this.options.refuseCommands?.some((prefix) => upper.startsWith(prefix.toUpperCase()))) return this.respond([], 'ERROR');
    if (command === '' || command === 'Z' || command === '&F' || command === 'Z0' || command === 'S0=0' || command === 'V1' || command === 'Q0') return this.respond([], 'OK');
    if (command === 'E0' || command === 'E1') {
      this.echo = command === 'E1';
      return this.respond([], 'OK');
    }
    const cmee = /^\+CMEE=([012])$/.exec(command);
    if (cmee) {
      this.cmee = Number(cmee[1]);
      return this.respond([], 'OK');
    }
    if (command === '+CMEE?') return this.respond([`+CMEE: ${this.cmee}`], 'OK');
    const ident = (name: string, value: string): string => (this.options.prefixedIdentity ? `+${name}: "${value}"` : value);
    if (command === '+CGMI' || command === '+GMI') return this.respond([ident('CGMI', identity.manufacturer)], 'OK');
    if (command === '+CGMM' || command === '+GMM') return this.respond([ident('CGMM', identity.model)], 'OK');
    if (command === '+CGMR' || command === '+GMR') return this.respond([ident('CGMR', identity.revision)], 'OK');
    if (command === '+CGSN' || command === '+GSN') return this.respond([ident('CGSN', identity.imei)], 'OK');
    if (command === 'I' || command === 'I0') return this.respond([identity.manufacturer, identity.model, `Revision: ${identity.revision}`], 'OK');
    if (command === '+CIMI') return this.pinLocked ? this.respond([], this.cmeError(11)) : this.respond([identity.imsi], 'OK');
    if (command === '+CPIN?') return this.respond([this.pinLocked ? '+CPIN: SIM PIN' : '+CPIN: READY'], 'OK');
    const cpin = /^\+CPIN="?([0-9]+)"?$/.exec(command);
    if (cpin) {
      if (!this.pinLocked) return this.respond([], this.cmeError(3));
      if (cpin[1] !== this.options.pin) return this.respond([], this.cmeError(16));
      this.pinLocked = false;
      this.poweredAtMs = Date.now();
      return this.respond([], 'OK');
    }
    const regQuery = /^\+(CREG|CGREG|CEREG)\?$/.exec(command);
    if (regQuery) return this.respond([`+${regQuery[1]}: 0,${this.registered() ? this.options.registrationStat ?? 1 : 2}`], 'OK');
    if (/^\+(CREG|CGREG|CEREG)=[0-2]$/.test(command)) return this.respond([], 'OK');
    if (command === '+CSQ') return this.respond([`+CSQ: ${this.options.rssi ?? 21},99`], 'OK');
    if (command === '+COPS?') {
      return this.respond([this.registered() ? `+COPS: 0,0,"${this.options.operator ?? 'Emulated Network'}",7` : '+COPS: 0'], 'OK');
    }
    if (command === '+CFUN?') return this.respond(['+CFUN: 1'], 'OK');
    if (/^\+CFUN=1$/.test(command)) return this.respond([], 'OK');
    if (command === '+CMGF=?') return this.respond(['+CMGF: (0,1)'], 'OK');
    if (command === '+CMGF?') return this.respond([`+CMGF: ${this.pduMode ? 0 : 1}`], 'OK');
    const cmgf = /^\+CMGF=([01])$/.exec(command);
    if (cmgf) {
      this.pduMode = cmgf[1] === '0';
      return this.respond([], 'OK');
    }
    if (command === '+CSCS=?') return this.respond(['+CSCS: ("IRA","GSM","UCS2","HEX","PCCP437","8859-1")'], 'OK');
    if (command === '+CSCS?') return this.respond(['+CSCS: "IRA"'], 'OK');
    if (/^\+CSCS="[A-Z0-9-]+"$/.test(command)) return this.respond([], 'OK');
    if (command === '+CSCA?') return this.respond([`+CSCA: "+${this.smsc}",145`], 'OK');
    if (/^\+CSCA="\+?[0-9]+"(,\d+)?$/.test(command)) return this.respond([], 'OK');
    if (command === '+CSMS?') return this.respond(['+CSMS: 0,1,1,1'], 'OK');
    if (command === '+CSMS=?') return this.respond(['+CSMS: (0,1)'], 'OK');
    if (/^\+CSMS=[01]$/.test(command)) return this.respond(['+CSMS: 1,1,1'], 'OK');
    if (command === '+CPMS=?') return this.respond(['+CPMS: ("SM","ME"),("SM","ME"),("SM","ME")'], 'OK');
    if (command === '+CPMS?') return this.respond([`+CPMS: "SM",${this.storage.size},30,"SM",${this.storage.size},30,"SM",${this.storage.size},30`], 'OK');
    const cpms = /^\+CPMS="([A-Z]{2})"/.exec(command);
    if (cpms) {
      if (!this.memories.has(cpms[1] as string)) return this.respond([], this.cmsError(302));
      this.readMemory = cpms[1] as string;
    }
    if (/^\+CPMS=/.test(command)) return this.respond([`+CPMS: ${this.storage.size},30,${this.storage.size},30,${this.storage.size},30`], 'OK');
    if (command === '+CNMI=?') return this.respond(['+CNMI: (0-2),(0-3),(0,2),(0-2),(0,1)'], 'OK');
    if (command === '+CNMI?') return this.respond([`+CNMI: 2,${this.cnmiMt},0,${this.cnmiDs},0`], 'OK');
    const cnmi = /^\+CNMI=(\d)?(?:,(\d)?)?(?:,(\d)?)?(?:,(\d)?)?(?:,(\d)?)?$/.exec(command);
    if (cnmi) {
      this.cnmiMt = Number(cnmi[2] ?? 0);
      this.cnmiDs = Number(cnmi[4] ?? 0);
      return this.respond([], 'OK');
    }
    if (command === '+CNMA') {
      this.cnmaCount++;
      return this.respond([], 'OK');
    }
    if (command === '+CSMP?') return this.respond(['+CSMP: 17,167,0,0'], 'OK');
    if (command.startsWith('+CSMP=')) return this.respond([], 'OK');
    if (command === '+CMGS=?' || command === '+CMGR=?' || command === '+CMGD=?') return this.respond([], 'OK');
    const cmgs = /^\+CMGS=(\d+)$/.exec(command);
    if (cmgs) {
      if (!this.pduMode) return this.respond([], this.cmsError(302));
      if (!this.registered()) return this.respond([], this.cmsError(331));
      if (this.promptDrops > 0) {
        // The prompt never comes; whatever the client writes is swallowed until it sends ESC.
        this.promptDrops--;
        this.pendingCmgs = { tpduOctets: Number(cmgs[1]) };
        this.busy = false;
        this.silentCmgs = true;
        return;
      }
      this.pendingCmgs = { tpduOctets: Number(cmgs[1]) };
      this.write('\r\n> ');
      return;
    }
    const cmgr = /^\+CMGR=(\d+)$/.exec(command);
    if (cmgr) {
      const message = this.storage.get(Number(cmgr[1]));
      if (message === undefined) return this.respond([], this.cmsError(321));
      const stat = message.status === 'REC UNREAD' ? 0 : 1;
      message.status = 'REC READ';
      return this.respond([`+CMGR: ${stat},,${message.tpduOctets}`, message.hex], 'OK');
    }
    const cmgd = /^\+CMGD=(\d+)(?:,(\d))?$/.exec(command);
    if (cmgd) {
      const index = Number(cmgd[1]);
      if (cmgd[2] !== undefined && cmgd[2] !== '0') this.storage.clear();
      else this.storage.delete(index);
      this.deleted.push(index);
      this.releaseHeld();
      return this.respond([], 'OK');
    }
    const cmgl = /^\+CMGL=(\d)$/.exec(command);
    if (cmgl) {
      const lines: string[] = [];
      for (const [index, message] of this.storage) {
        lines.push(`+CMGL: ${index},${message.status === 'REC UNREAD' ? 0 : 1},,${message.tpduOctets}`, message.hex);
      }
      return this.respond(lines, 'OK');
    }
    return this.respond([], 'ERROR');
  }

  private finishCmgs(hex: string): void {
    const pending = this.pendingCmgs;
    this.pendingCmgs = null;
    this.input = '';
    if (pending === null) return;
    if (this.silentCmgs) {
      // No prompt was given: a real modem would take the PDU as a garbled command line.
      this.silentCmgs = false;
      this.respond([], 'ERROR');
      return;
    }
    let pdu: DecodedSubmit;
    try {
      pdu = decodeCmgsPdu(hex, pending.tpduOctets);
    } catch (err) {
      this.protocolErrors.push(`malformed PDU ${hex}: ${err instanceof Error ? err.message : String(err)}`);
      this.respond([], this.cmsError(304));
      return;
    }
    this.submitPdusReceived++;
    if (this.submitMode === 'no-response') return;
    const failure = this.failures.shift() ?? (this.submitMode === 'temporary' ? 42 : this.submitMode === 'permanent' ? 1 : undefined);
    const [minMs, maxMs] = this.timing.submitDelayMs;
    const delayMs = minMs + Math.random() * (maxMs - minMs);
    this.submitsAwaitingAnswer++;
    this.later(delayMs, () => {
      this.submitsAwaitingAnswer--;
      if (failure !== undefined) return this.respond([], this.cmsError(failure));
      const messageReference = this.nextMr;
      this.nextMr = (this.nextMr + 1) % 256; // TS 23.040 §9.2.3.6: TP-MR is 0..255 and wraps
      this.received.push({ messageReference, pdu, hex });
      this.respond([`+CMGS: ${messageReference}${this.options.cmgsSuffix ?? ''}`], 'OK');
      if (pdu.statusReportRequest && this.options.statusReports !== false) {
        const submittedAt = new Date();
        this.later(this.timing.statusReportDelayMs, () => this.sendStatusReport(messageReference, pdu.destination.digits, submittedAt));
      }
    });
  }

  private sendStatusReport(messageReference: number, recipient: string, submittedAt: Date, status = this.options.reportStatus ?? 0x00): void {
    const report = buildStatusReportPdu({ smsc: this.smsc, messageReference, recipient, submittedAt, dischargedAt: new Date(), status });
    if (this.cnmiDs === 1) this.unsolicited([`+CDS: ${report.tpduOctets}`, report.hex]);
    else if (this.cnmiDs === 2) {
      const index = this.store({ status: 'REC UNREAD', ...report });
      if (index !== null) this.unsolicited([`+CDSI: "SM",${index}`]);
    }
  }
}

/** TS 27.005 §3.2.5 verbose texts the emulator prints with AT+CMEE=2. */
const CMS_VERBOSE: Readonly<Record<number, string>> = {
  1: 'Unassigned (unallocated) number', 21: 'Short message transfer rejected', 28: 'Unidentified subscriber', 41: 'Temporary failure',
  42: 'Congestion', 47: 'Resources unavailable, unspecified', 302: 'operation not allowed', 304: 'invalid PDU mode parameter',
  321: 'invalid memory index', 331: 'no network service', 332: 'network timeout', 500: 'unknown error',
};
const CME_VERBOSE: Readonly<Record<number, string>> = { 3: 'operation not allowed', 11: 'SIM PIN required', 16: 'incorrect password' };
