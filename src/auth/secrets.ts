/**
 * Small primitives for credentials: SHA-256 digests of high-entropy tokens, constant-time
 * comparison, and unbiased base62 random strings.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Compares two secrets in time that does not depend on where they differ. Both sides are hashed
 * first so the buffers have equal length (timingSafeEqual requires it) and the length of the
 * secret is not revealed either.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const digestA = createHash('sha256').update(a, 'utf8').digest();
  const digestB = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(digestA, digestB);
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Bytes at or above 248 (= 4 x 62) are discarded so every character is equally likely. */
const UNBIASED_LIMIT = 248;

/** `length` base62 characters: log2(62) = 5.95 bits each, so 43 characters carry 256 bits. */
export function randomBase62(length: number, random: (octets: number) => Buffer = randomBytes): string {
  let out = '';
  while (out.length < length) {
    for (const byte of random(length * 2)) {
      if (byte >= UNBIASED_LIMIT) continue;
      out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A random opaque token in base64url (refresh tokens): 32 bytes = 256 bits. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * A short keyed digest of a value that must not appear in logs (a username, which may hold a
 * password typed into the wrong field) but whose repeats an operator wants to correlate. The key is
 * random per process, so the tag cannot be reversed by hashing guesses offline, and the 12 hex
 * characters (48 bits) are too few to confirm a guess even with the key.
 */
export function createLogTagger(key: Buffer = randomBytes(32)): (value: string) => string {
  return (value) => createHmac('sha256', key).update(value, 'utf8').digest('hex').slice(0, 12);
}
