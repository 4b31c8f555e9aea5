/**
 * A real `smsgate serve` child process for end-to-end tests and the e2e bench: writes its config
 * into a temp dir, seeds an account in its database the way the admin commands do (AuthService),
 * spawns `node dist/src/cli/main.js serve --config FILE`, waits for its "listening" log line, and
 * can SIGTERM or SIGKILL it. Peak RSS comes from /proc/<pid>/status (VmHWM), so the SMSC and the
 * webhook receiver running in the parent process do not count.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { AuthService } from '../../src/auth/index.js';
import { resolveConfigFromObject, type SmsGateConfig } from '../../src/gateway/config.js';
import { silentLogger } from '../../src/common/log.js';
import { openDatabase, openStore } from '../../src/store/sqlite/database.js';
import { createPgStores } from '../../src/store/postgres/stores.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { killPeer, spawnPeer } from './peer-process.js';

/** The repository root, from test/support/ or dist/test/support/. */
export const REPO_ROOT = ((): string => {
  let dir = fileURLToPath(new URL('.', import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) dir = resolve(dir, '..');
  return dir;
})();
const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

/** Compiles with tsc when dist/ is missing or older than a source file (npm test builds first anyway). */
export function ensureBuilt(): void {
  if (existsSync(CLI) && newestMtimeMs(join(REPO_ROOT, 'src')) <= statSync(CLI).mtimeMs) return;
  // tsc still emits when other parts of the tree have type errors; only a missing CLI is fatal.
  spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(REPO_ROOT, 'tsconfig.json')], { stdio: 'ignore' });
  if (!existsSync(CLI)) throw new Error(`build failed: ${CLI} missing`);
}

function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtimeMs(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Writes the config file (raw JSON, as a user would) and returns its path and resolved form. */
export function writeGatewayConfig(dir: string, raw: Record<string, unknown>): { path: string; config: SmsGateConfig } {
  const path = join(dir, 'smsgate.json');
  writeFileSync(path, JSON.stringify(raw, null, 2));
  return { path, config: resolveConfigFromObject(raw, path) };
}

export interface SeededAccount {
  clientName: string;
  username: string;
  token: string;
}

/** What seedAccount writes: the client (with its webhook) and the senders it may use. */
export interface AccountSeed {
  clientName?: string;
  webhookUrl?: string;
  webhookSecret?: string;
  senders?: { name: string; type: 0 | 1 | 2 }[];
}

/** Creates a client (with its webhook), an admin user and a PAT in the gateway's SQLite database. */
export async function seedAccount(config: SmsGateConfig, account: AccountSeed = {}): Promise<SeededAccount> {
  const store = await openStore({ path: config.database.path, synchronous: config.database.synchronous });
  try {
    return await seedWith(sqliteStorePorts(store).auth, config, account);
  } finally {
    await store.close();
  }
}

/** The same on the gateway's PostgreSQL (database.url), as `smsgate client/user/token` would write it there. */
export async function seedPgAccount(config: SmsGateConfig, account: AccountSeed = {}): Promise<SeededAccount> {
  const database = await openDatabase(config.database);
  if (database.kind !== 'postgres') throw new Error('seedPgAccount: expected a PostgreSQL config (database.url)');
  try {
    return await seedWith(createPgStores(database.pool).auth, config, account);
  } finally {
    await database.close();
  }
}

async function seedWith(authStore: Parameters<typeof AuthService.create>[0], config: SmsGateConfig, account: AccountSeed): Promise<SeededAccount> {
  const auth = await AuthService.create(authStore, config.auth, SecretBox.fromKeyFile(config.database.keyFile), { logger: silentLogger() });
  const clientName = account.clientName ?? 'acme';
  const username = `${clientName}-admin`;
  await auth.createClient({
    name: clientName,
    ...(account.webhookUrl === undefined ? {} : { webhookUrl: account.webhookUrl }),
    ...(account.webhookSecret === undefined ? {} : { webhookSecret: account.webhookSecret }),
  });
  await auth.createUser({ clientName, username, password: 'correct horse battery staple', isAdmin: true });
  for (const sender of account.senders ?? []) await auth.addSender({ clientName, sender: sender.name, type: sender.type });
  return { clientName, username, token: await auth.createPersonalAccessToken(username) };
}

export class GatewayProcess {
  private exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    private readonly child: ChildProcess,
    readonly baseUrl: string,
    /** Log lines the child wrote (JSON from pino, or text; the first 10,000), for failure messages. */
    readonly logLines: string[],
  ) {
    this.exited = exitOf(child);
  }

  /** Spawns `smsgate serve --config configPath` and resolves once it listens. */
  static async spawn(
    configPath: string,
    options: {
      env?: NodeJS.ProcessEnv;
      startTimeoutMs?: number;
      /** e.g. ['--cpu-prof'] */
      nodeArgs?: string[];
      /** Name the config with --config (default) or with SMSGATE_CONFIG. */
      configVia?: 'flag' | 'env';
    } = {},
  ): Promise<GatewayProcess> {
    ensureBuilt();
    const viaEnv = options.configVia === 'env';
    const child = spawnPeer(process.execPath, [...(options.nodeArgs ?? []), CLI, 'serve', ...(viaEnv ? [] : ['--config', configPath])], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...options.env, ...(viaEnv ? { SMSGATE_CONFIG: configPath } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    const baseUrl = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => {
        // Never leave a stray server behind a failed start.
        killPeer(child, 'SIGKILL');
        reject(new Error(`smsgate serve did not listen within the timeout:\n${lines.slice(-20).join('\n')}`));
      }, options.startTimeoutMs ?? 30_000);
      const onLine = (line: string): void => {
        if (lines.length < 10_000) lines.push(line);
        const listening = /listening on (http:\/\/[^\s"]+)/.exec(line);
        if (listening?.[1] !== undefined) {
          clearTimeout(timer);
          resolveUrl(listening[1]);
        }
      };
      createInterface({ input: child.stdout! }).on('line', onLine);
      createInterface({ input: child.stderr! }).on('line', onLine);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`smsgate serve exited with ${code} before listening:\n${lines.slice(-20).join('\n')}`));
      });
    });
    return new GatewayProcess(child, baseUrl, lines);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Resident set size now, and the peak since start (VmHWM), in bytes. */
  memory(): { rssBytes: number; peakRssBytes: number } {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { rssBytes: kb('VmRSS'), peakRssBytes: kb('VmHWM') };
  }

  kill(signal: NodeJS.Signals): void {
    killPeer(this.child, signal);
  }

  /** SIGTERM, then the exit code (0 for a clean stop). */
  async stop(): Promise<number | null> {
    killPeer(this.child, 'SIGTERM');
    return (await this.exited).code;
  }

  waitForExit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.exited;
  }
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolveExit) => child.once('exit', (code, signal) => resolveExit({ code, signal })));
}
