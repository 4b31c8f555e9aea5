/**
 * src/store/sqlite/serve-lock.ts in one process (SQLite's locks also separate connections of one
 * process): a second acquire is refused with DATABASE_IN_USE naming the database and the holder,
 * a holder row left by a process that no longer holds the lock blocks nothing, release frees it.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/common/errors.js';
import { ServeLock, serveGuardFor, serveLockPathFor } from '../../src/store/sqlite/serve-lock.js';

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function databasePath(): string {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-lock-'));
  return join(dir, 'data', 'smsgate.sqlite');
}

describe('ServeLock', () => {
  it('refuses a second holder, naming the database, the pid and the host; free again after release', () => {
    const path = databasePath();
    const lock = ServeLock.acquire(path);
    let refusal: unknown;
    try {
      ServeLock.acquire(path);
    } catch (err) {
      refusal = err;
    }
    expect(isGatewayError(refusal, 'DATABASE_IN_USE')).toBe(true);
    // The holder is this very process here, which the message cannot tell from a start racing it.
    expect((refusal as Error).message).toContain(`database ${path} is in use`);
    lock.release();
    lock.release();
    ServeLock.acquire(path).release();
  });

  it('is not blocked by a holder row whose process no longer holds the lock (kill -9)', () => {
    const path = databasePath();
    ServeLock.acquire(path).release();
    // What a killed holder leaves: its row; its OS lock went with the process.
    const leftover = new Database(serveLockPathFor(path));
    leftover.prepare('INSERT INTO serve_lock_holder (id, pid, host, since) VALUES (1, 999999, ?, ?)').run('elsewhere', '2026-01-01T00:00:00.000Z');
    leftover.close();
    const lock = ServeLock.acquire(path);
    const reader = new Database(serveLockPathFor(path), { readonly: true });
    expect(reader.prepare('SELECT pid, host FROM serve_lock_holder').get()).toEqual({ pid: process.pid, host: hostname() });
    reader.close();
    lock.release();
  });

  it('creates its file 0600', () => {
    const path = databasePath();
    const lock = ServeLock.acquire(path);
    expect(statSync(serveLockPathFor(path)).mode & 0o777).toBe(0o600);
    lock.release();
  });
});

describe('serveGuardFor', () => {
  it('takes the file lock for SQLite and nothing for PostgreSQL, whose serves are nodes of one cluster', () => {
    const path = databasePath();
    const guard = serveGuardFor({ kind: 'sqlite', path, synchronous: 'FULL' });
    expect(() => ServeLock.acquire(path)).toThrow(/is in use by/);
    guard.release();
    ServeLock.acquire(path).release();
    const url = 'postgresql://gw@db/smsgate';
    // Two serves on one PostgreSQL are two nodes: neither is refused.
    const guards = [serveGuardFor({ kind: 'postgres', url }), serveGuardFor({ kind: 'postgres', url })];
    expect(guards).toHaveLength(2);
    for (const g of guards) g.release();
  });
});
