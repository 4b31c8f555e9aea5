/**
 * The database section's rules a schema cannot say: `database.url` (a
 * postgresql:// or postgres:// URL) selects PostgreSQL, `database.path` (the default) SQLite, and
 * a file naming both is refused. A URL may carry a password: it is never printed, here or by any
 * caller that uses describeDatabase / redactDatabaseUrl.
 */
import { GatewayError } from '../common/errors.js';
import { maskSecretsIn, redactUrlPassword, rememberSecret, urlPassword } from '../common/secret-text.js';
import type { ConfigProblem, DatabaseConfig } from './types.js';

export const DEFAULT_DATABASE_PATH = 'data/smsgate.sqlite';

const POSTGRES_PROTOCOLS = new Set(['postgresql:', 'postgres:']);

/** Which backend a config selects, with what it needs to open it. */
export type DatabaseTarget =
  | { kind: 'sqlite'; path: string; synchronous: DatabaseConfig['synchronous'] }
  | { kind: 'postgres'; url: string };

export function databaseTarget(database: DatabaseConfig): DatabaseTarget {
  return database.url === undefined
    ? { kind: 'sqlite', path: database.path, synchronous: database.synchronous }
    : { kind: 'postgres', url: database.url };
}

/** The URL with any password replaced by `***` (user, host, port and database stay readable), whatever characters it holds. */
export function redactDatabaseUrl(url: string): string {
  return redactUrlPassword(url);
}

/**
 * `text` (a driver's error message, a log line) with the URL's password masked in every form it can
 * take: pg's own errors may echo the connection string or parts of it.
 */
export function maskDatabaseUrlSecret(text: string, url: string): string {
  const password = urlPassword(url);
  return password === undefined ? redactUrlPassword(text) : maskSecretsIn(text, [password]);
}

/** How messages name the database: the SQLite path, or the redacted PostgreSQL URL. */
export function describeDatabase(database: DatabaseConfig): string {
  return database.url === undefined ? database.path : redactDatabaseUrl(database.url);
}

/** A password with `/ ? # @ :` or a space breaks the URL's structure unless percent-encoded. */
const ENCODE_HINT = '; in the user and password, write / ? # @ : % and space percent-encoded (%2F %3F %23 %40 %3A %25 %20)';

function decodedOrUndefined(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** `path` and `url` both given, or a url that is not postgresql://[user[:password]@]host[:port]/database. */
export function databaseProblem(database: { path?: string; url?: string }): ConfigProblem | null {
  if (database.url === undefined) return null;
  // Every message of this process masks the password from here on, whatever prints it.
  const password = urlPassword(database.url);
  if (password !== undefined) rememberSecret(password);
  if (database.path !== undefined) {
    return { key: 'database.url', what: 'give either database.url (PostgreSQL) or database.path (SQLite), not both' };
  }
  const shown = redactDatabaseUrl(database.url);
  let parsed: URL;
  try {
    parsed = new URL(database.url);
  } catch {
    return { key: 'database.url', what: `"${shown}" is not a URL (postgresql://user:password@host:port/database)${ENCODE_HINT}` };
  }
  if (password !== undefined && decodedOrUndefined(password) === undefined) {
    return { key: 'database.url', what: `"${shown}": the password is not percent-encoded correctly (a % must start %XX: write %25 for %)` };
  }
  if (!POSTGRES_PROTOCOLS.has(parsed.protocol)) {
    return { key: 'database.url', what: `"${shown}" is not a PostgreSQL URL: it must start with postgresql:// or postgres://` };
  }
  if (parsed.hostname === '') return { key: 'database.url', what: `"${shown}" names no host (postgresql://user@host:port/database)` };
  const name = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (name === '' || name.includes('/')) {
    return { key: 'database.url', what: `"${shown}" names no database (postgresql://user@host:port/database)` };
  }
  return null;
}

/**
 * The database sections read from a file that selects PostgreSQL but names no keyFile, with that
 * file's name. Such a section still gets the default keyFile (beside database.path), which is all
 * `smsgate migrate` and the admin commands need on one machine; `serve` refuses it (serveKeyFileProblem).
 */
const keyFileNotGiven = new WeakMap<DatabaseConfig, string>();

/** Called by the loader for a section with `url` and no `keyFile`, before the default is filled in. */
export function noteKeyFileNotGiven(database: DatabaseConfig, sourceName: string): void {
  keyFileNotGiven.set(database, sourceName);
}

/**
 * The nodes of a cluster must share one secret key (webhook secrets, signing keys are encrypted
 * with it, and any node may read what another wrote), so `serve` on PostgreSQL needs
 * `database.keyFile` given explicitly: a default beside a per-machine SQLite path would give every
 * node its own key. A CONFIG_INVALID naming the key and the file, or null.
 */
export function serveKeyFileProblem(database: DatabaseConfig): GatewayError | null {
  if (database.url === undefined) return null;
  const source = keyFileNotGiven.get(database);
  if (source === undefined) return null;
  return new GatewayError(
    'CONFIG_INVALID',
    `${source}: database.keyFile: required with database.url: every node of a cluster must use the same key file (copy it to each node); ` +
      'e.g. "keyFile": "/etc/smsgate/smsgate.key"',
    { details: { path: 'database.keyFile' } },
  );
}
