/**
 * The black-box harness of the spec tests: a real `smsgate serve` child process (built from dist/),
 * a temp SQLite database, and accounts made with the real admin CLI (`client create`, `user create`,
 * `token create`, `sender add`) against the same config file. Tests talk to it with Node's fetch
 * only, as an integration written against SPEC.md would.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureBuilt, REPO_ROOT } from '../support/gateway-process.js';
import { killPeer, spawnPeer } from '../support/peer-process.js';

const execFileAsync = promisify(execFile);
const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

export const ADMIN_PASSWORD = 'correct horse battery staple';
/** api.maxBodyBytes of the spec servers: room for 100,000 recipients (about 5.3 MiB). */
export const SPEC_MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface SpecAccount {
  clientName: string;
  username: string;
  /** A personal access token of the account's administrator. */
  token: string;
}

export interface SpecServerOptions {
  /** Extra top-level config sections, merged over the defaults below. */
  config?: Record<string, unknown>;
}

export class SpecServer {
  private child: ChildProcess | undefined;
  private logTail: string[] = [];
  /** Every log line, for checks that no secret was ever logged. */
  readonly allLines: string[] = [];
  /** Every log line at pino level error (50) or above: an unexpected failure inside the server. */
  readonly errorLines: string[] = [];
  baseUrl = '';

  private constructor(
    readonly dir: string,
    readonly configPath: string,
  ) {}

  /** Builds if needed, writes the config and starts `smsgate serve` on an ephemeral port. */
  static async start(options: SpecServerOptions = {}): Promise<SpecServer> {
    ensureBuilt();
    const dir = mkdtempSync(join(tmpdir(), 'smsgate-spec-'));
    const configPath = join(dir, 'smsgate.json');
    const config = {
      database: { path: join(dir, 'smsgate.sqlite') },
      api: { host: '127.0.0.1', port: 0, maxBodyBytes: SPEC_MAX_BODY_BYTES },
      logging: { level: 'info' },
      transports: [{ name: 'sim', type: 'simulator', receiptDelayMs: 50 }],
      routes: [{ prefix: '', transport: 'sim' }],
      ...options.config,
    };
    writeFileSync(configPath, JSON.stringify(config, null, 2));
    const server = new SpecServer(dir, configPath);
    // Migrations first, so the admin commands and the server share one schema from the start.
    await server.cli('migrate');
    await server.listen();
    return server;
  }

  /** Runs an admin command with this server's config and --json; resolves with its parsed output. */
  async cli(...args: string[]): Promise<Record<string, unknown>> {
    const { stdout } = await execFileAsync(process.execPath, [CLI, ...args, '--config', this.configPath, '--json'], { cwd: this.dir });
    const text = stdout.trim();
    return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  }

  /** An account with an administrator and a PAT, made with the CLI. */
  async createAccount(
    clientName: string,
    options: { webhookUrl?: string; webhookSecret?: string; admin?: boolean; senders?: Array<{ name: string; type: 0 | 1 | 2 }> } = {},
  ): Promise<SpecAccount> {
    const clientArgs = ['client', 'create', '--name', clientName];
    if (options.webhookUrl !== undefined) clientArgs.push('--webhook-url', options.webhookUrl);
    if (options.webhookSecret !== undefined) clientArgs.push('--webhook-secret', options.webhookSecret);
    await this.cli(...clientArgs);
    const username = `${clientName}-user`;
    await this.createUser(clientName, username, options.admin ?? true);
    for (const sender of options.senders ?? []) await this.addSender(clientName, sender.name, sender.type);
    return { clientName, username, token: await this.createToken(username) };
  }

  async createUser(clientName: string, username: string, admin: boolean): Promise<void> {
    const args = ['user', 'create', '--client', clientName, '--username', username, '--password', ADMIN_PASSWORD];
    if (admin) args.push('--admin');
    await this.cli(...args);
  }

  async createToken(username: string): Promise<string> {
    const out = await this.cli('token', 'create', '--username', username);
    const token = out['token'];
    if (typeof token !== 'string') throw new Error(`token create printed no token: ${JSON.stringify(out)}`);
    return token;
  }

  async addSender(clientName: string, sender: string, type: 0 | 1 | 2): Promise<void> {
    await this.cli('sender', 'add', '--client', clientName, '--sender', sender, '--type', String(type));
  }

  url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  /** The last log lines of the server, for failure messages. */
  log(): string {
    return this.logTail.join('\n');
  }

  /** Kills the server process with a signal and waits for it to exit (the data directory stays). */
  async kill(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
  }

  /** Starts `smsgate serve` again on the same config and database (a new ephemeral port). */
  async restart(): Promise<void> {
    await this.kill('SIGTERM');
    this.baseUrl = '';
    await this.listen();
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      killPeer(child, 'SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private listen(): Promise<void> {
    const child = spawnPeer(process.execPath, [CLI, 'serve', '--config', this.configPath], {
      cwd: this.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    return new Promise((resolve, reject) => {
      let pending = '';
      const onData = (chunk: Buffer): void => {
        pending += chunk.toString('utf8');
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) {
          this.logTail.push(line);
          this.allLines.push(line);
          if (/"level":(5\d|60)/.test(line)) this.errorLines.push(line);
          if (this.logTail.length > 200) this.logTail.shift();
          const match = /listening on (http:\/\/[^\s"]+)/.exec(line);
          if (match?.[1] !== undefined && this.baseUrl === '') {
            this.baseUrl = match[1];
            resolve();
          }
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) => reject(new Error(`smsgate serve exited with ${String(code)} before listening:\n${this.log()}`)));
    });
  }
}

/** Sends a JSON (or raw) body with a bearer token. */
export function postJson(url: string, token: string | undefined, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function getWithToken(url: string, token: string | undefined, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers } });
}

export function postForm(url: string, fields: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

/** Polls until fn resolves a value that is not undefined, or throws after timeoutMs. */
export async function eventually<T>(fn: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface Summary {
  totalSent: number;
  delivered: number;
  undelivered: number;
  pending: number;
}

/** Posts a campaign and waits until its summary exists (the campaign is ready). */
export async function createReadyCampaign(server: SpecServer, token: string, body: Record<string, unknown>): Promise<{ id: string; summary: Summary }> {
  const res = await postJson(server.url('/v1/campaign'), token, body);
  if (res.status !== 202) throw new Error(`POST /v1/campaign answered ${res.status}: ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  const summary = await eventually(async () => {
    const s = await getWithToken(server.url(`/v1/campaign/${id}`), token);
    return s.status === 200 ? ((await s.json()) as Summary) : undefined;
  }, `campaign ${id} to be ready`);
  return { id, summary };
}
