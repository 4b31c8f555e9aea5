/**
 * A modem scripted byte for byte behind @serialport/binding-mock: the transport opens its path
 * through the injected binding, every command line it writes is answered by the test's script,
 * and replies can be read whole or one byte per read (the mock's maxReadSize 1). For the AT
 * dialogue; the serial path itself (a pty, an unplug) is covered by the socat tests.
 */
import { SerialPortMock } from 'serialport';
import type { SerialBinding } from '../../../src/transports/modem/index.js';

/**
 * @serialport/binding-mock's MockBinding, as serialport loads it: the package's own ESM entry has
 * no type declarations under NodeNext resolution, and the same object through serialport is typed.
 */
const MockBinding = SerialPortMock.binding;
type MockPortBinding = Awaited<ReturnType<typeof MockBinding.open>>;

export type Delivery = 'whole' | 'byte-by-byte';

/**
 * What the client wrote: a command line (without its CR), a PDU ended by Ctrl-Z after AT+CMGS, or
 * ESC in its place (the send cancelled, TS 27.005 §3.5.1).
 */
export type Written = { kind: 'command'; line: string } | { kind: 'pdu'; hex: string } | { kind: 'escape' };

/** The modem's answer to what was written: the exact bytes to send back, or null for silence. */
export type Script = (written: Written, modem: ScriptedModem) => string | null;

const CTRL_Z = '\x1a';
const ESC = '\x1b';

/**
 * Answers of an ordinary registered modem with a ready SIM, so a script only states what its test
 * is about. Everything not listed is a bare OK.
 */
export function readyModem(line: string): string {
  if (line === 'AT+CPIN?') return '\r\n+CPIN: READY\r\n\r\nOK\r\n';
  if (line === 'AT+CREG?') return '\r\n+CREG: 0,1\r\n\r\nOK\r\n';
  if (line === 'AT+CSQ') return '\r\n+CSQ: 20,99\r\n\r\nOK\r\n';
  if (line === 'AT+COPS?') return '\r\n+COPS: 0,0,"Test Net"\r\n\r\nOK\r\n';
  return '\r\nOK\r\n';
}

export class ScriptedModem {
  /** Everything written, in order. */
  readonly written: Written[] = [];
  /** Bytes each read of the client's returned, in order. */
  readonly readSizes: number[] = [];
  private port: MockPortBinding | null = null;
  private input = '';
  private pduExpected = false;

  constructor(
    readonly path: string,
    private readonly script: Script,
  ) {}

  /** The AT+CMGS PDUs received, in order. */
  get pdus(): string[] {
    return this.written.flatMap((w) => (w.kind === 'pdu' ? [w.hex] : []));
  }

  get commands(): string[] {
    return this.written.flatMap((w) => (w.kind === 'command' ? [w.line] : []));
  }

  /** Sends bytes to the client unasked (a URC), or as a late answer. */
  emit(text: string): void {
    if (this.port === null) throw new Error(`${this.path} is not open`);
    this.port.emitData(Buffer.from(text, 'latin1'));
  }

  /** Called by the binding when the client opens this path. */
  attach(port: MockPortBinding): void {
    this.port = port;
    this.input = '';
    this.pduExpected = false;
    const write = port.write.bind(port);
    port.write = async (buffer: Buffer): Promise<void> => {
      await write(buffer);
      this.receive(buffer.toString('latin1'));
    };
    const read = port.read.bind(port);
    port.read = async (buffer: Buffer, offset: number, length: number): Promise<{ buffer: Buffer; bytesRead: number }> => {
      const result = await read(buffer, offset, length);
      this.readSizes.push(result.bytesRead);
      return result;
    };
  }

  private receive(text: string): void {
    this.input += text;
    for (;;) {
      if (this.pduExpected) {
        // TS 27.005 §3.5.1: the PDU ends with Ctrl-Z, or ESC cancels it.
        const end = this.input.search(/[\x1a\x1b]/);
        if (end === -1) return;
        const cancelled = this.input[end] === ESC;
        const hex = this.input.slice(0, end);
        this.input = this.input.slice(end + 1);
        this.pduExpected = false;
        this.handle(cancelled ? { kind: 'escape' } : { kind: 'pdu', hex });
        continue;
      }
      const end = this.input.indexOf('\r');
      if (end === -1) return;
      const line = this.input.slice(0, end).trim();
      this.input = this.input.slice(end + 1);
      if (line === '' || line === CTRL_Z) continue;
      if (/^AT\+CMGS=/i.test(line)) this.pduExpected = true;
      this.handle({ kind: 'command', line });
    }
  }

  private handle(written: Written): void {
    this.written.push(written);
    const reply = this.script(written, this);
    // After the current write settles, as a modem answers after it has read the line.
    if (reply !== null) setImmediate(() => this.port?.isOpen && this.emit(reply));
  }
}

/**
 * The serial binding a transport under test is given: @serialport/binding-mock, with each opened
 * port handed to the ScriptedModem registered for its path.
 */
export class ScriptedModems {
  private readonly modems = new Map<string, ScriptedModem>();
  readonly binding: SerialBinding;

  constructor() {
    MockBinding.reset();
    this.binding = {
      list: () => MockBinding.list(),
      open: async (options) => {
        const port = await MockBinding.open(options);
        this.modems.get(options.path)?.attach(port);
        return port;
      },
    };
  }

  add(path: string, delivery: Delivery, script: Script): ScriptedModem {
    // maxReadSize 1: every read the transport makes returns one byte.
    MockBinding.createPort(path, { echo: false, record: false, ...(delivery === 'byte-by-byte' ? { maxReadSize: 1 } : {}) });
    const modem = new ScriptedModem(path, script);
    this.modems.set(path, modem);
    return modem;
  }
}
