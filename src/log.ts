/**
 * The one logger factory. pino with secrets redacted wherever they might appear in a bound object;
 * modules take a `Logger` and bind their own context with `logger.child({ transport, campaignId })`.
 */
import { pino, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

export const REDACTED_PATHS = [
  'password', '*.password', 'secret', '*.secret', 'webhookSecret', '*.webhookSecret', 'token', '*.token',
  'access_token', 'refresh_token', '*.access_token', '*.refresh_token', 'authorization', '*.authorization',
  'headers.authorization', 'req.headers.authorization', 'pin', '*.pin',
];

export interface LogOptions {
  level?: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to read them back. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: LogOptions = {}): Logger {
  const level = options.level ?? process.env['SMSGATE_LOG_LEVEL'] ?? 'info';
  const settings = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { service: 'smsgate' } };
  return options.destination === undefined ? pino(settings) : pino(settings, options.destination);
}

/** A logger that drops everything, for tests and library users who bring none. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
