/**
 * The one classification of "the database cannot serve now" (store/write-failures.ts), which the
 * engine retries on and the API answers 503 for: the SQLSTATEs, socket errors and pg messages of a
 * stopped, unreachable or full PostgreSQL, SQLite's busy/full/I/O codes, and those same errors
 * wrapped in a GatewayError's cause (a campaign not stored). Errors a retry cannot cure are not it.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/common/errors.js';
import { apiCodeOf, httpProblemFor } from '../../src/api/http-errors.js';
import { isTransientStoreFailure } from '../../src/store/write-failures.js';
import { isStoreWriteRefusal } from '../../src/store/write-refusal.js';

const coded = (code: string): Error => Object.assign(new Error(`failed with ${code}`), { code });

describe('a database that cannot serve now', () => {
  it.each(['57P03', '57P01', '53100', '53300', '08006', '08001', '08003', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'SQLITE_BUSY', 'SQLITE_IOERR_READ', 'SQLITE_FULL'])(
    '%s is transient and answered 503',
    (code) => {
      expect(isTransientStoreFailure(coded(code))).toBe(true);
      expect(isStoreWriteRefusal(coded(code))).toBe(true);
      expect(httpProblemFor(apiCodeOf(coded(code))!).status).toBe(503);
    },
  );

  it.each(['Connection terminated unexpectedly', 'Connection terminated due to connection timeout', 'timeout exceeded when trying to connect'])(
    'pg\'s uncoded "%s" is transient',
    (message) => expect(isTransientStoreFailure(new Error(message))).toBe(true),
  );

  it('looks through a GatewayError\'s cause', () => {
    const wrapped = new GatewayError('CAMPAIGN_NOT_STORED', 'not stored', { cause: coded('53100') });
    expect(isTransientStoreFailure(wrapped)).toBe(true);
    expect(apiCodeOf(wrapped)).toBe('CAMPAIGN_NOT_STORED');
  });

  it.each(['23505', '42P01', '22P02', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR'])('%s is not transient and stays a 500 if it reaches a route', (code) => {
    expect(isTransientStoreFailure(coded(code))).toBe(false);
    expect(apiCodeOf(coded(code))).toBeUndefined();
  });
});
