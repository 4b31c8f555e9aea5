import { describe, expect, it } from 'vitest';
import { readBearerToken, looksLikeJwt } from '../../src/auth/bearer.js';
import { FailureLimiter } from '../../src/auth/failure-limiter.js';
import { hashPassword, verifyPassword } from '../../src/auth/password.js';
import { PAT_RANDOM_CHARACTERS, generatePat, hashPat, isWellFormedPat, looksLikePat, patHint } from '../../src/auth/pat.js';
import { constantTimeEqual, randomBase62, sha256Hex } from '../../src/auth/secrets.js';
import { TEST_SCRYPT_COST } from './auth-fixture.js';

describe('personal access tokens', () => {
  it('read <prefix>_pat_ followed by 43 base62 characters (256 bits)', () => {
    const token = generatePat('smsgate');
    expect(token).toMatch(/^smsgate_pat_[0-9A-Za-z]{43}$/);
    expect(PAT_RANDOM_CHARACTERS * Math.log2(62)).toBeGreaterThanOrEqual(128);
    expect(isWellFormedPat('smsgate', token)).toBe(true);
  });

  it('are different every time', () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => generatePat('smsgate')));
    expect(tokens.size).toBe(1000);
  });

  it('keep the prefix case-sensitive', () => {
    const token = generatePat('SmsGate');
    expect(looksLikePat('SmsGate', token)).toBe(true);
    expect(looksLikePat('smsgate', token)).toBe(false);
    expect(looksLikePat('SmsGate', token.replace('SmsGate', 'SMSGATE'))).toBe(false);
  });

  it('are malformed with a wrong length or alphabet after the marker', () => {
    const token = generatePat('smsgate');
    expect(isWellFormedPat('smsgate', token.slice(0, -1))).toBe(false);
    expect(isWellFormedPat('smsgate', `${token}A`)).toBe(false);
    expect(isWellFormedPat('smsgate', `${token.slice(0, -1)}-`)).toBe(false);
  });

  it('are stored as a SHA-256 digest, shown as a hint of four characters', () => {
    const token = generatePat('smsgate');
    expect(hashPat(token)).toBe(sha256Hex(token));
    expect(hashPat(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(patHint('smsgate', token)).toBe(`smsgate_pat_...${token.slice(-4)}`);
  });

  it('draw base62 characters without modulo bias: bytes 248..255 are skipped', () => {
    const bytes = [248, 255, 0, 61, 62, 247];
    let call = 0;
    const random = (size: number): Buffer => Buffer.from(Array.from({ length: size }, () => bytes[call++ % bytes.length] as number));
    // 0 -> '0', 61 -> 'z', 62 -> '0' (62 mod 62), 247 -> 'z' (247 mod 62 = 61)
    expect(randomBase62(4, random)).toBe('0z0z');
  });
});

describe('secrets compared in constant time', () => {
  it('compares equal and unequal strings of any length', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
  });
});

describe('password hashing (scrypt)', () => {
  it('verifies the right password and refuses a wrong one', async () => {
    const hash = await hashPassword('correct horse', TEST_SCRYPT_COST);
    expect(hash).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horsE', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
  });

  it('salts every hash', async () => {
    expect(await hashPassword('same', TEST_SCRYPT_COST)).not.toBe(await hashPassword('same', TEST_SCRYPT_COST));
  });

  it('treats canonically equal Unicode passwords as equal (NFC)', async () => {
    const hash = await hashPassword('caf\u00e9', TEST_SCRYPT_COST);
    expect(await verifyPassword('cafe\u0301', hash)).toBe(true);
  });

  it('refuses a stored value that is not a scrypt hash', async () => {
    expect(await verifyPassword('x', 'plain-text-password')).toBe(false);
    expect(await verifyPassword('x', 'scrypt$0$8$1$AAAA$BBBB')).toBe(false);
    expect(await verifyPassword('x', 'scrypt$1024$8$1$AAAA$')).toBe(false);
  });

  it('uses the cost stored in the hash, not the current default', async () => {
    const hash = await hashPassword('pw', { N: 2048, r: 4, p: 2 });
    expect(hash.startsWith('scrypt$2048$4$2$')).toBe(true);
    expect(await verifyPassword('pw', hash)).toBe(true);
  });
});

describe('Authorization header', () => {
  it.each([
    [undefined, { ok: false, reason: 'missing' }],
    ['', { ok: false, reason: 'missing' }],
    ['Bearer', { ok: false, reason: 'malformed' }],
    ['Bearer ', { ok: false, reason: 'malformed' }],
    ['Basic dXNlcjpwYXNz', { ok: false, reason: 'malformed' }],
    ['Bearer a b', { ok: false, reason: 'malformed' }],
    ['Bearer abc$', { ok: false, reason: 'malformed' }],
    ['Bearer abc.def-_~+/==', { ok: true, token: 'abc.def-_~+/==' }],
    ['bearer tok', { ok: true, token: 'tok' }],
    ['BEARER  tok ', { ok: true, token: 'tok' }],
  ])('%j -> %j', (header, expected) => {
    expect(readBearerToken(header)).toEqual(expected);
  });

  it('recognises the compact JWS shape', () => {
    expect(looksLikeJwt('aa.bb.cc')).toBe(true);
    expect(looksLikeJwt('aa.bb')).toBe(false);
    expect(looksLikeJwt('aa.bb.cc.dd')).toBe(false);
    expect(looksLikeJwt('aa.b+b.cc')).toBe(false);
  });
});

describe('FailureLimiter', () => {
  const windowMs = 60_000;

  it('limits a key at maxFailures inside the window, until the oldest leaves it', () => {
    const limiter = new FailureLimiter({ windowMs, maxFailures: 3 });
    limiter.recordFailure('u', 1_000);
    limiter.recordFailure('u', 2_000);
    expect(limiter.check('u', 2_500)).toEqual({ limited: false });
    limiter.recordFailure('u', 3_000);
    expect(limiter.check('u', 3_000)).toEqual({ limited: true, retryAfterMs: 58_000 });
    expect(limiter.check('u', 60_999)).toEqual({ limited: true, retryAfterMs: 1 });
    expect(limiter.check('u', 61_000)).toEqual({ limited: false });
  });

  it('slides: failures older than the window no longer count', () => {
    const limiter = new FailureLimiter({ windowMs, maxFailures: 2 });
    limiter.recordFailure('u', 0);
    limiter.recordFailure('u', 70_000);
    expect(limiter.check('u', 70_000)).toEqual({ limited: false });
  });

  it('keeps keys apart and forgets a key on reset', () => {
    const limiter = new FailureLimiter({ windowMs, maxFailures: 1 });
    limiter.recordFailure('a', 0);
    expect(limiter.check('a', 1).limited).toBe(true);
    expect(limiter.check('b', 1).limited).toBe(false);
    limiter.reset('a');
    expect(limiter.check('a', 1).limited).toBe(false);
  });

  it('tracks at most maxKeys keys, forgetting the stalest', () => {
    const limiter = new FailureLimiter({ windowMs, maxFailures: 1, maxKeys: 2 });
    limiter.recordFailure('a', 0);
    limiter.recordFailure('b', 1);
    limiter.recordFailure('a', 2);
    limiter.recordFailure('c', 3);
    expect(limiter.check('b', 4).limited).toBe(false);
    expect(limiter.check('a', 4).limited).toBe(true);
    expect(limiter.check('c', 4).limited).toBe(true);
  });
});
