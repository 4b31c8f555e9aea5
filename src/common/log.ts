/**
 * The one logger factory. pino with secrets redacted wherever they might appear in a bound object;
 * modules take a `Logger` and bind their own context with `logger.child({ transport, campaignId })`.
 */
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { maskKnownSecrets } from './secret-text.js';

export type Logger = PinoLogger;

const SECRET_KEYS = ['password', 'secret', 'webhookSecret', 'token', 'access_token', 'refresh_token', 'authorization', 'pin'];

/**
 * pino's redaction has no recursive wildcard, so each secret key is listed at the depths where a
 * bound object can carry it: top level, one level down (`{ device: { pin } }`) and two levels down
 * (`{ config: { transports: [{ password }] } }` and `req.headers.authorization`).
 */
export const REDACTED_PATHS = SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`, `*[*].${key}`, `*.*[*].${key}`]);

export interface LogOptions {
  level?: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to read them back; serve a file or pino-pretty. */
  destination?: DestinationStream;
}

export function createLogger(options: LogOptions = {}): Logger {
  const level = options.level ?? process.env['SMSGATE_LOG_LEVEL'] ?? 'info';
  // Redaction by key misses a secret inside a string (a database URL in an error message): every
  // line is also passed through maskKnownSecrets, which masks the secrets the config named.
  const settings = {
    level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { service: 'smsgate' }, hooks: { streamWrite: maskKnownSecrets },
  };
  return options.destination === undefined ? pino(settings) : pino(settings, options.destination);
}

/** A logger that drops everything, for tests and library users who bring none. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
