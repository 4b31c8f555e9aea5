/**
 * "Try again later" on either backend: SQLite's result-code names and PostgreSQL's
 * SQLSTATEs (PostgreSQL manual, Appendix A) for a store that cannot take a write now are refusals
 * (503 on the token endpoint, a campaign left to the next pass); a constraint or a missing table is
 * not. And a duplicate is a duplicate on both.
 */
import { describe, expect, it } from 'vitest';
import { isUniqueViolation } from '../../src/store/unique-violation.js';
import { isPostgresRefusal, isStoreWriteRefusal } from '../../src/store/write-refusal.js';

const coded = (code: string): Error => Object.assign(new Error(code), { code });

describe('store refusals', () => {
  it('names SQLite and PostgreSQL refusals alike', () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_FULL', 'SQLITE_READONLY_DBMOVED', 'SQLITE_IOERR_WRITE']) expect(isStoreWriteRefusal(coded(code)), code).toBe(true);
    // 08006 connection_failure, 53100 disk_full, 53300 too_many_connections, 57P01 admin_shutdown,
    // 57P03 cannot_connect_now, 57014 query_canceled, 40001 serialization_failure, 40P01 deadlock_detected,
    // 55P03 lock_not_available, 25006 read_only_sql_transaction, and the socket gone.
    for (const code of ['08006', '53100', '53300', '57P01', '57P03', '57014', '40001', '40P01', '55P03', '25006', 'ECONNRESET', 'ECONNREFUSED']) {
      expect(isPostgresRefusal(coded(code)), code).toBe(true);
      expect(isStoreWriteRefusal(coded(code)), code).toBe(true);
    }
  });

  it('does not take a broken request or schema for a refusal', () => {
    // 23505 unique_violation, 23503 foreign_key_violation, 42P01 undefined_table, 22P02 invalid_text_representation.
    for (const code of ['23505', '23503', '42P01', '22P02', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR', '0800', '080061']) {
      expect(isStoreWriteRefusal(coded(code)), code).toBe(false);
    }
    expect(isStoreWriteRefusal(new Error('no code'))).toBe(false);
    expect(isStoreWriteRefusal(undefined)).toBe(false);
    expect(isStoreWriteRefusal({ code: 57 })).toBe(false);
  });

  it('knows a duplicate on either backend', () => {
    expect(isUniqueViolation(coded('SQLITE_CONSTRAINT_UNIQUE'))).toBe(true);
    expect(isUniqueViolation(coded('23505'))).toBe(true);
    expect(isUniqueViolation(coded('SQLITE_CONSTRAINT_FOREIGNKEY'))).toBe(false);
    expect(isUniqueViolation(coded('23503'))).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
  });
});
