/**
 * Personal access tokens: `<prefix>_pat_<43 base62 characters>`. 43 base62 characters carry 256 bits
 * of randomness (the contract asks for at least 128). The prefix is case-sensitive (SPEC
 * "Authentication" §2: casing must be preserved), so `SMSGATE_pat_...` is not a token of prefix
 * `smsgate`. Only a SHA-256 digest is stored: for a 256-bit random value a fast hash is enough,
 * since no guessing attack can walk that space, and it allows a direct indexed lookup.
 */
import { randomBase62, sha256Hex } from './secrets.js';

export const PAT_RANDOM_CHARACTERS = 43;
const PAT_SEPARATOR = '_pat_';
const PAT_BODY = /^[0-9A-Za-z]{43}$/;

export function patMarker(prefix: string): string {
  return `${prefix}${PAT_SEPARATOR}`;
}

export function generatePat(prefix: string, random?: (octets: number) => Buffer): string {
  return patMarker(prefix) + randomBase62(PAT_RANDOM_CHARACTERS, random);
}

export function looksLikePat(prefix: string, token: string): boolean {
  return token.startsWith(patMarker(prefix));
}

/** True when the part after the marker has the exact length and alphabet generatePat produces. */
export function isWellFormedPat(prefix: string, token: string): boolean {
  return looksLikePat(prefix, token) && PAT_BODY.test(token.slice(patMarker(prefix).length));
}

export function hashPat(token: string): string {
  return sha256Hex(token);
}

/** What an operator may see to tell tokens apart: the marker and the last four characters. */
export function patHint(prefix: string, token: string): string {
  return `${patMarker(prefix)}...${token.slice(-4)}`;
}
