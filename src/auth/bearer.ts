/**
 * Reads `Authorization: Bearer <token>` (RFC 6750 §2.1). The scheme is case-insensitive
 * (RFC 9110 §11.1); the token must be a b64token. Anything else is malformed.
 */
export type BearerToken = { ok: true; token: string } | { ok: false; reason: 'missing' | 'malformed' };

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export function readBearerToken(authorizationHeader: string | undefined): BearerToken {
  if (authorizationHeader === undefined || authorizationHeader.trim() === '') return { ok: false, reason: 'missing' };
  const match = BEARER.exec(authorizationHeader);
  if (match === null) return { ok: false, reason: 'malformed' };
  return { ok: true, token: match[1] as string };
}

/** Three base64url segments: the compact JWS form (RFC 7515 §7.1). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}
