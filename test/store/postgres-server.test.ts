/**
 * The throwaway PostgreSQL the store tests use (test/support/postgres-server.ts): it serves fresh
 * databases, and neither stop() nor the death of the test worker leaves a process or a directory.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';

/** Processes whose command line names this directory (the supervisor, postgres and its children). */
function processesUsing(dir: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function until(condition: () => boolean, deadlineMs: number): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

describe('throwaway PostgreSQL', () => {
  let server: PostgresServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('gives each caller a fresh database and leaves nothing running or on disk after stop', async () => {
    server = await startPostgres();
    const [first, second] = [await server.createDatabase(), await server.createDatabase()];
    expect(first).not.toEqual(second);
    const client = new pg.Client({ connectionString: first });
    client.on('error', () => undefined);
    await client.connect();
    const { rows } = await client.query<{ version: string; db: string }>('SELECT version() AS version, current_database() AS db');
    expect(rows[0]?.version).toMatch(/^PostgreSQL 15\./);
    expect(first.endsWith(`/${rows[0]?.db}`)).toBe(true);
    expect(processesUsing(server.dir).length).toBeGreaterThan(1);
    // The connection is still open: stop() is a fast shutdown and does not wait for it.
    await server.stop();
    expect(processesUsing(server.dir)).toEqual([]);
    expect(existsSync(server.dir)).toBe(false);
  });

  it('shuts down when its supervisor gets the parent-death signal (SIGTERM), as when the worker dies', async () => {
    server = await startPostgres();
    const { dir, pid } = server;
    process.kill(pid, 'SIGTERM');
    expect(await until(() => processesUsing(dir).length === 0, 15_000)).toBe(true);
    expect(await until(() => !existsSync(dir), 5_000)).toBe(true);
  });
});
