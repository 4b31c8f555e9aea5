/**
 * A PostgreSQL password in `database.url` never reaches stdout or stderr, whatever characters it holds
 * (`/`, `@`, space, `#`, `%`, `?`: each breaks a URL parser on the raw value), through the built CLI:
 * `config check`, `migrate` and `serve`, against a port nothing listens on and against a real
 * PostgreSQL started here. Messages name the database as `postgresql://smsgate:***@host:port/db`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskSecretsIn, redactUrlPassword, urlPassword } from '../../src/common/secret-text.js';
import { freePort } from '../support/free-port.js';
import { ensureBuilt, GatewayProcess, REPO_ROOT } from '../support/gateway-process.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';

const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
const execFileAsync = promisify(execFile);

/** Every password starts with MARKER, so no form of it (raw, percent-encoded, JSON-escaped) can hide from the check. */
const MARKER = 'Qv7';
const PASSWORDS = [`${MARKER}sl/ash`, `${MARKER}a@t`, `${MARKER}sp ace`, `${MARKER}ha#sh`, `${MARKER}pe%rcent`, `${MARKER}al/l@ #%?`];

interface CliResult {
  code: number;
  output: string;
}

async function smsgate(configPath: string, password: string, ...args: string[]): Promise<CliResult> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [CLI, ...args, '--config', configPath], {
      cwd: REPO_ROOT, timeout: 60_000, env: { ...process.env, PGPW: password },
    });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, output: (failed.stdout ?? '') + (failed.stderr ?? '') };
  }
}

let dir: string;
let postgres: PostgresServer;

beforeAll(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'smsgate-url-secrets-'));
  postgres = await startPostgres();
}, 60_000);

afterAll(async () => {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A config naming the password through ${PGPW}, as an operator writes it. */
function configFor(name: string, hostPort: string, database: string): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({
    database: { url: `postgresql://smsgate:\${PGPW}@${hostPort}/${database}`, keyFile: join(dir, `${name}.key`) },
    api: { host: '127.0.0.1', port: 0 },
    transports: [{ name: 'sim', type: 'simulator' }],
  }));
  return path;
}

describe('masking a URL password', () => {
  it('masks by structure and by value, whatever the password holds', () => {
    for (const password of PASSWORDS) {
      const url = `postgresql://gw:${password}@db.example:5432/smsgate`;
      expect(urlPassword(url)).toBe(password);
      expect(redactUrlPassword(url)).toBe('postgresql://gw:***@db.example:5432/smsgate');
      // A driver's message echoing the password, raw, percent-encoded or inside JSON.
      const echoed = `failed for ${password} (${encodeURIComponent(password)}) ${JSON.stringify({ url })}`;
      expect(maskSecretsIn(echoed, [password])).not.toContain(MARKER);
    }
    expect(redactUrlPassword('postgresql://gw@db/smsgate')).toBe('postgresql://gw@db/smsgate');
  });
});

describe('database.url passwords never printed by the CLI', () => {
  it('config check, migrate and serve against a port nothing listens on', async () => {
    const port = await freePort();
    const configPath = configFor('unreachable', `127.0.0.1:${port}`, 'smsgate');
    for (const password of PASSWORDS) {
      const [check, checkJson, migrate, serve] = await Promise.all([
        smsgate(configPath, password, 'config', 'check'),
        smsgate(configPath, password, 'config', 'check', '--json'),
        smsgate(configPath, password, 'migrate'),
        smsgate(configPath, password, 'serve'),
      ]);
      for (const [what, result] of [['config check', check], ['config check --json', checkJson], ['migrate', migrate], ['serve', serve]] as const) {
        expect(result.output, `${what} with ${JSON.stringify(password)}`).not.toContain(MARKER);
        expect(result.output, `${what} with ${JSON.stringify(password)}`).toContain('postgresql://smsgate:***@');
      }
      // The database cannot be reached (or the raw URL is refused): a named failure, exit 1.
      expect(migrate.code).toBe(1);
      expect(serve.code).toBe(1);
    }
  }, 600_000);

  it('migrate and serve against a real PostgreSQL: raw passwords refused or used, encoded ones used, none printed', async () => {
    for (const [index, password] of PASSWORDS.entries()) {
      const database = new URL(await postgres.createDatabase()).pathname.slice(1);
      const configPath = configFor(`real-${index}`, `${postgres.host}:${postgres.port}`, database);
      // Raw: a password with / # ? or a lone % cannot be told from the URL's structure: refused as a config error.
      const raw = await smsgate(configPath, password, 'migrate');
      expect(raw.output, `raw ${JSON.stringify(password)}`).not.toContain(MARKER);
      expect(raw.output).toContain(`postgresql://smsgate:***@${postgres.host}:${postgres.port}/${database}`);
      // Percent-encoded, as the error message asks: migrate applies the schema (trust authentication
      // accepts any password), and still prints none of it.
      const encoded = await smsgate(configPath, encodeURIComponent(password), 'migrate');
      expect(encoded.output, `encoded ${JSON.stringify(password)}`).not.toContain(MARKER);
      expect(encoded.code, encoded.output).toBe(0);
    }
    // serve's startup and stop lines, on the database the last migrate prepared.
    const last = PASSWORDS.length - 1;
    const gateway = await GatewayProcess.spawn(join(dir, `real-${last}.json`), { env: { PGPW: encodeURIComponent(PASSWORDS[last] as string) } });
    expect(await gateway.stop()).toBe(0);
    expect(gateway.logLines.length).toBeGreaterThan(0);
    expect(gateway.logLines.join('\n')).not.toContain(MARKER);
  }, 600_000);
});
