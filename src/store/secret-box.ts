/**
 * Reversible encryption for secrets the gateway must use later (webhook signing secrets, the JWT
 * private key): AES-256-GCM with a random 96-bit nonce per value. The key lives in a file beside the
 * database (mode 0600), made on first use, so a copied database file alone does not reveal secrets.
 * Values that only need checking (passwords, tokens) are hashed instead, never stored here.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { GatewayError } from '../common/errors.js';

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT = 'v1';

export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** Reads the key file, creating it with a fresh random key when absent. ':memory:' gives an ephemeral key. */
  static fromKeyFile(path: string): SecretBox {
    if (path === ':memory:') return new SecretBox(randomBytes(KEY_BYTES));
    if (!existsSync(path)) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, randomBytes(KEY_BYTES).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    }
    const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
    if (key.length !== KEY_BYTES) {
      throw new GatewayError('SECRET_KEY_INVALID', `secret key file ${path} must hold ${KEY_BYTES} bytes in base64`);
    }
    return new SecretBox(key);
  }

  static fromKey(key: Buffer): SecretBox {
    if (key.length !== KEY_BYTES) throw new GatewayError('SECRET_KEY_INVALID', `secret key must be ${KEY_BYTES} bytes`);
    return new SecretBox(Buffer.from(key));
  }

  seal(plaintext: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${FORMAT}.${Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  open(sealed: string): string {
    const [format, payload] = sealed.split('.', 2);
    if (format !== FORMAT || payload === undefined) throw new GatewayError('SECRET_UNREADABLE', 'sealed secret has an unknown format');
    const raw = Buffer.from(payload, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, NONCE_BYTES));
    decipher.setAuthTag(raw.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch (cause) {
      throw new GatewayError('SECRET_UNREADABLE', 'sealed secret does not open with this key (wrong key file?)', { cause });
    }
  }
}

/** The store that says whether the database holds sealed secrets: its JWT signing keys. */
export interface SealedSecretSource {
  signingKeys(): Promise<readonly { private_jwk_enc: string; retired_at: number | null }[]>;
}

/**
 * One sealed secret the database holds (the current signing key's, else a retired one's), or
 * undefined when it holds none. Every command that seals anything (serve, client, user, token,
 * sender) makes the signing key first (AuthService.create), so a database with a sealed webhook
 * secret has one too.
 */
export async function sealedSecretOf(source: SealedSecretSource): Promise<string | undefined> {
  const keys = await source.signingKeys();
  return (keys.find((key) => key.retired_at === null) ?? keys[0])?.private_jwk_enc;
}

/** What a command does with database.keyFile (pure: both backends and every command decide here). */
export type KeyFileAction = 'create' | 'open' | 'refuse-missing';

/**
 * A key is made only beside a database that holds no sealed secret: a new key beside sealed secrets
 * would seal new ones with it and open none of the old (every token and webhook secret lost).
 */
export function keyFileAction(keyFileExists: boolean, holdsSealedSecret: boolean): KeyFileAction {
  if (keyFileExists) return 'open';
  return holdsSealedSecret ? 'refuse-missing' : 'create';
}

/**
 * The SecretBox for a database: its key file read (and checked against one of its sealed secrets),
 * or made when the database holds none. Refused with SECRET_KEY_INVALID naming the file when the file
 * is missing beside sealed secrets, or does not open them.
 */
export function secretBoxForDatabase(keyFile: string, sealed: string | undefined, databaseName: string): SecretBox {
  if (keyFileAction(keyFile === ':memory:' || existsSync(keyFile), sealed !== undefined) === 'refuse-missing') {
    throw new GatewayError(
      'SECRET_KEY_INVALID',
      `database.keyFile: ${keyFile} does not exist, and ${databaseName} holds secrets sealed with a key: ` +
        'restore that key file (kept with the database\'s backup, or copied from a node that served this database); no new key is made, it could not open them',
      { details: { path: 'database.keyFile' } },
    );
  }
  const secretBox = SecretBox.fromKeyFile(keyFile);
  if (sealed === undefined) return secretBox;
  try {
    secretBox.open(sealed);
  } catch (cause) {
    throw new GatewayError(
      'SECRET_KEY_INVALID',
      `database.keyFile: ${keyFile} does not open the secrets stored in ${databaseName}: use the key file this database was used with (every node of a cluster must use the same key file)`,
      { cause, details: { path: 'database.keyFile' } },
    );
  }
  return secretBox;
}

/**
 * `serve` on SQLite: a database that is new (no file, an empty file, or one holding no sealed secret)
 * beside a key file that exists is refused. Every serve and admin command seals a signing key in the
 * database as soon as it makes the key file, so that pair means the database was deleted or
 * database.path names the wrong file: starting would make a new database in which every token fails.
 * A fresh install (no database, no key file) is not refused: serve makes both.
 */
export function keyFileWithoutDatabaseProblem(keyFile: string, databasePath: string, databaseIsNew: boolean): GatewayError | null {
  if (!databaseIsNew || databasePath === ':memory:' || keyFile === ':memory:' || !existsSync(keyFile)) return null;
  return new GatewayError(
    'DATABASE_NOT_FOUND',
    `the database ${databasePath} (database.path) is new or missing, but its key file ${keyFile} exists: the database was probably deleted or database.path is wrong. ` +
      `Restore the database (with its key file) or correct database.path; to start a new installation on purpose, move ${keyFile} away first`,
    { details: { path: 'database.path' } },
  );
}

/** Whether the SQLite file at `path` is absent or empty (a database SQLite would make new). */
export function sqliteFileIsNew(path: string): boolean {
  if (path === ':memory:') return true;
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat === undefined || stat.size === 0;
}

/** The key file that goes with a database path: `data/smsgate.sqlite` -> `data/smsgate.key`. */
export function defaultKeyFileFor(databasePath: string): string {
  if (databasePath === ':memory:') return ':memory:';
  return databasePath.replace(/\.(sqlite3?|db)$/i, '') + '.key';
}
