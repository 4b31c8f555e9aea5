/**
 * Password hashing with scrypt (RFC 7914), through node:crypto so it runs off the event loop.
 * The stored form carries its parameters, `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>`, so the cost
 * can be raised later without invalidating existing hashes.
 *
 * Default cost N = 2^14, r = 8, p = 5: one of the OWASP Password Storage Cheat Sheet's equivalent
 * scrypt settings, picked over N = 2^17, p = 1 because it needs 16 MiB per hash instead of 128 MiB,
 * which matters with four libuv threads hashing at once on a small gateway host.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

export const DEFAULT_SCRYPT_COST: ScryptCost = { N: 16384, r: 8, p: 5 };

const SALT_BYTES = 16;
const KEY_BYTES = 32;

function scryptAsync(password: string, salt: Buffer, keyBytes: number, cost: ScryptCost): Promise<Buffer> {
  // maxmem must exceed 128 * N * r bytes (plus slack) or node refuses the parameters.
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyBytes, options, (err, key) => (err === null ? resolve(key) : reject(err)));
  });
}

export async function hashPassword(password: string, cost: ScryptCost = DEFAULT_SCRYPT_COST): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scryptAsync(password, salt, KEY_BYTES, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Parses a stored hash; undefined when it is not one of ours. */
function parseHash(encoded: string): { cost: ScryptCost; salt: Buffer; key: Buffer } | undefined {
  const [scheme, n, r, p, salt, key] = encoded.split('$');
  if (scheme !== 'scrypt' || salt === undefined || key === undefined) return undefined;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  if (![cost.N, cost.r, cost.p].every((v) => Number.isSafeInteger(v) && v > 0)) return undefined;
  return { cost, salt: Buffer.from(salt, 'base64'), key: Buffer.from(key, 'base64') };
}

/** Constant time in the password: the derived key is compared with timingSafeEqual. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const parsed = parseHash(encoded);
  if (parsed === undefined || parsed.key.length === 0) return false;
  const derived = await scryptAsync(password, parsed.salt, parsed.key.length, parsed.cost);
  return timingSafeEqual(derived, parsed.key);
}
