/**
 * The hooks and helpers of a test file that runs `smsgate` admin commands through the CLI's
 * dispatcher in this process against a real throwaway PostgreSQL selected by `database.url`.
 * Call useCliOnPostgres() at the top level of the file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import { main } from '../../src/cli/main.js';
import { captureCliOutput, type CliResult } from './cli-output.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

export interface CliOnPostgres {
  /** `--config <the file's config>`, for the commands run through smsgate(). */
  cfg: readonly string[];
  /** One command, its output captured. */
  smsgate(...args: string[]): Promise<CliResult>;
  /** One command with the config and `--json`, which must succeed; its parsed output. */
  json<T>(...args: string[]): Promise<T>;
  /** One query on the database the commands use, on a connection of its own. */
  query<T extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
}

export function useCliOnPostgres(dirPrefix: string): CliOnPostgres {
  const dir = mkdtempSync(join(tmpdir(), dirPrefix));
  const configPath = join(dir, 'config.json');
  const cfg = ['--config', configPath];
  let server: PostgresServer | undefined;
  let url = '';

  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase();
    writeFileSync(configPath, JSON.stringify({ database: { url, keyFile: join(dir, 'secrets.key') } }));
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const smsgate = (...args: string[]): Promise<CliResult> => captureCliOutput(() => main(args));
  return {
    cfg,
    smsgate,
    async json<T>(...args: string[]): Promise<T> {
      const run = await smsgate(...args, ...cfg, '--json');
      expect(run).toMatchObject({ code: 0, stderr: '' });
      return JSON.parse(run.stdout) as T;
    },
    async query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query<T>(sql, params)).rows;
      } finally {
        await client.end();
      }
    },
  };
}
