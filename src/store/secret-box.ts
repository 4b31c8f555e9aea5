/**
 * Reversible encryption for secrets the gateway must use later (webhook signing secrets, the JWT
 * private key): AES-256-GCM with a random 96-bit nonce per value. The key lives in a file beside the
 * database (mode 0600), made on first use, so a copied database file alone does not reveal secrets.
 * Values that only need checking (passwords, tokens) are hashed instead, never stored here.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { GatewayError } from '../errors.js';

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

/** The key file that goes with a database path: `data/smsgate.sqlite` -> `data/smsgate.key`. */
export function defaultKeyFileFor(databasePath: string): string {
  if (databasePath === ':memory:') return ':memory:';
  return databasePath.replace(/\.(sqlite3?|db)$/i, '') + '.key';
}
