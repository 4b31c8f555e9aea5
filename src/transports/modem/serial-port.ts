/**
 * The serial port a modem is reached through, opened on an injectable serialport binding: the
 * OS's own (bindings-cpp, auto-detected) by default, @serialport/binding-mock in unit tests, so
 * the AT dialogue is tested without a pty while the pty tests keep covering the real serial path.
 */
import { SerialPortStream } from '@serialport/stream';
import { SerialPort } from 'serialport';

/** serialport's hardware access (the bindings-interface `list` / `open`): how bytes reach a port. */
export type SerialBinding = ConstructorParameters<typeof SerialPortStream>[0]['binding'];

/** The OS's serial ports: the binding serialport's own SerialPort class uses. */
export const SYSTEM_SERIAL_BINDING: SerialBinding = SerialPort.binding;

/** An open port: a byte stream that emits 'data', 'close' and 'error'. */
export type ModemPort = SerialPortStream;

/** Opens `path` at `baudRate` through `binding`; rejects with the binding's error (no such device, busy). */
export async function openSerialPort(binding: SerialBinding, path: string, baudRate: number): Promise<ModemPort> {
  const port = new SerialPortStream({ binding, path, baudRate, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  return port;
}

/** Closes the port if it is open; resolves once closed (never rejects: the link is gone either way). */
export function closeSerialPort(port: ModemPort): Promise<void> {
  return new Promise((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve()));
}
