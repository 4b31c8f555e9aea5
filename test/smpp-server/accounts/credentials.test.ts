/**
 * An SMPP account's system_id and password (SMPP 3.4 §4.1.1: C-Octet Strings of at most 16 and 9
 * octets with the NUL): what is accepted, and why the rest is refused.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PASSWORD_CHARS, MAX_SYSTEM_ID_CHARS, passwordProblem, systemIdProblem } from '../../../src/smpp-server/accounts/credentials.js';

describe('system_id', () => {
  it('takes 1 to 15 printable ASCII characters', () => {
    expect(MAX_SYSTEM_ID_CHARS).toBe(15);
    expect(systemIdProblem('a')).toBeNull();
    expect(systemIdProblem('acme_01.test-X!')).toBeNull();
    expect(systemIdProblem('x'.repeat(15))).toBeNull();
  });

  it('refuses 16 characters, an empty one, spaces and non-ASCII, saying why', () => {
    expect(systemIdProblem('x'.repeat(16))).toBe('is 16 characters: SMPP 3.4 allows at most 15 (16 octets with the NUL)');
    expect(systemIdProblem('')).toBe('must not be empty');
    expect(systemIdProblem('acme 01')).toBe('must be printable ASCII without spaces');
    expect(systemIdProblem('acmé')).toBe('must be printable ASCII without spaces');
    expect(systemIdProblem('acme\u0000')).toBe('must be printable ASCII without spaces');
  });
});

describe('password', () => {
  it('takes 1 to 8 printable ASCII characters, spaces included', () => {
    expect(MAX_PASSWORD_CHARS).toBe(8);
    expect(passwordProblem('p')).toBeNull();
    expect(passwordProblem('k3Y!9 zT')).toBeNull();
    expect(passwordProblem('~'.repeat(8))).toBeNull();
  });

  it('refuses 9 characters rather than shortening them', () => {
    expect(passwordProblem('123456789')).toBe('is 9 characters: SMPP 3.4 allows at most 8 (9 octets with the NUL); it is refused, not shortened');
  });

  it('refuses an empty password and characters outside printable ASCII', () => {
    expect(passwordProblem('')).toBe('must not be empty');
    expect(passwordProblem('pässwd')).toBe('must be printable ASCII');
    expect(passwordProblem('pass\tw')).toBe('must be printable ASCII');
  });
});
