/**
 * Which PostgreSQL failures the engine retries (a database that drops connections or
 * fails over) and which it reports; the SQLite classes are unchanged.
 */
import { expect, it } from 'vitest';
import { isTransientStoreFailure } from '../../src/store/write-failures.js';

const withCode = (code: string): Error => Object.assign(new Error(code), { code });

it.each([
  '57P01', '57P02', '57P03', '25P03', '08000', '08003', '08006', '08001', '53300', '53100', '40001', '40P01', 'ECONNREFUSED', 'ECONNRESET',
])('retries %s', (code) => {
  expect(isTransientStoreFailure(withCode(code))).toBe(true);
});

it.each(['Connection terminated unexpectedly', 'Connection terminated due to connection timeout', 'timeout exceeded when trying to connect'])(
  "retries pg's code-less '%s'",
  (message) => {
    expect(isTransientStoreFailure(new Error(message))).toBe(true);
  },
);

it.each(['23505', '23503', '42P01', '42601', '22P02', 'STORE_CLOSED'])('reports %s (a retry fails the same way)', (code) => {
  expect(isTransientStoreFailure(withCode(code))).toBe(false);
});

it('keeps the SQLite classes: SQLITE_FULL and SQLITE_IOERR_WRITE retried, SQLITE_CONSTRAINT_UNIQUE not', () => {
  expect(isTransientStoreFailure(withCode('SQLITE_FULL'))).toBe(true);
  expect(isTransientStoreFailure(withCode('SQLITE_IOERR_WRITE'))).toBe(true);
  expect(isTransientStoreFailure(withCode('SQLITE_CONSTRAINT_UNIQUE'))).toBe(false);
  expect(isTransientStoreFailure(new Error('something else'))).toBe(false);
});
