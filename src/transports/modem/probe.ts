/**
 * `smsgate modem probe`: opens one device, asks who it is and how it is doing, and closes it.
 * No init beyond ATE0 / AT+CMEE, no SIM PIN, nothing sent.
 */
import { pino } from 'pino';
import { GatewayError } from '../../common/errors.js';
import { AtChannel } from './at-channel.js';
import { ModemSession } from './modem-session.js';
import { type ModemProfile, loadProfile } from './profile.js';
import { closeSerialPort, openSerialPort, type SerialBinding, SYSTEM_SERIAL_BINDING } from './serial-port.js';

export interface ProbeResult {
  path: string;
  profile: string;
  manufacturer: string | null;
  model: string | null;
  revision: string | null;
  imei: string | null;
  simState: string | null;
  signal: { rssi: number | null; dbm: number | null };
  registration: string;
  operator: string | null;
}

/** `binding`: how `path` is opened (default: the OS's serial ports; unit tests pass a mock binding). */
export async function probeModem(path: string, profileName = 'generic', profilesDir?: string, binding: SerialBinding = SYSTEM_SERIAL_BINDING): Promise<ProbeResult> {
  const profile: ModemProfile = loadProfile(profileName, profilesDir);
  const port = await openSerialPort(binding, path, profile.baudRate).catch((err: Error) => {
    throw new GatewayError('MODEM_OPEN_FAILED', `cannot open ${path}: ${err.message}`, { details: { path } });
  });
  const channel = new AtChannel({ write: (data) => port.write(Buffer.from(data, 'latin1')) }, { onUrc: () => undefined });
  port.on('data', (chunk: Buffer) => channel.receive(chunk));
  port.on('close', () => channel.close('port closed'));
  port.on('error', (err: Error) => channel.close(err.message));
  const session = new ModemSession(channel, {
    profile,
    registrationTimeoutMs: 0,
    logger: pino({ level: 'silent' }),
    handlers: {
      onStatusReport: async () => undefined,
      onInbound: async () => undefined,
      // A probe stores nothing: rejecting leaves an undecodable PDU on the SIM for serve to record.
      onUndecodable: async () => {
        throw new Error('modem probe does not store undecodable PDUs');
      },
    },
  });
  try {
    await session.run('ATE0');
    await session.run(`AT+CMEE=${profile.cmee}`);
    const identity = await session.identity();
    const health = await session.health();
    return {
      path,
      profile: profile.name,
      ...identity,
      signal: { rssi: health.rssi, dbm: health.signalDbm },
      registration: health.registration,
      operator: health.operator,
    };
  } finally {
    channel.close('probe done');
    await closeSerialPort(port);
  }
}
