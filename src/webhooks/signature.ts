/**
 * Webhook authenticity (SPEC "Authentication" point 7): `X-Signature: sha256=<64 lowercase hex>`, an
 * HMAC-SHA256 over the exact raw UTF-8 request body keyed with the client's shared secret. The
 * header is omitted when no secret is configured.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Signature';
const SIGNATURE_PREFIX = 'sha256=';
/** SPEC: pattern `^sha256=[0-9a-f]{64}$`. */
const SIGNATURE_PATTERN = /^sha256=[0-9a-f]{64}$/;

/** 'sha256=' + lowercase hex HMAC-SHA256 of the raw bytes (a string is taken as UTF-8). */
export function signBody(rawBody: string | Buffer, secret: string): string {
  return SIGNATURE_PREFIX + createHmac('sha256', secret).update(rawBody).digest('hex');
}

/**
 * Checks a received X-Signature against the raw body, as a receiver must: compute over the bytes
 * before any JSON parsing, compare in constant time. A missing or malformed header is false.
 */
export function verifySignature(rawBody: string | Buffer, header: string | undefined | null, secret: string): boolean {
  if (typeof header !== 'string' || !SIGNATURE_PATTERN.test(header)) return false;
  const expected = Buffer.from(signBody(rawBody, secret), 'ascii');
  const received = Buffer.from(header, 'ascii');
  // Both are 71 ASCII bytes once the pattern matched, so timingSafeEqual's equal-length rule holds.
  return expected.length === received.length && timingSafeEqual(expected, received);
}
