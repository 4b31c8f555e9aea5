/**
 * N real `smsgate serve` nodes on one database, for the cluster tests and bench:cluster
 * items 7 and 8). Everything goes through the product's own front doors, the same on either
 * backend: one generated config per node (own API and admin ports, the same database, key file,
 * SMPP carrier and routes), `smsgate migrate` once, the account seeded with the admin commands
 * (`client create`, `user create`, `sender add`, `token create`), then `smsgate serve` per node.
 *
 * PostgreSQL (`database.url`) runs any number of nodes; SQLite (`database.path`) runs one, as
 * ARCHITECTURE "Stores and nodes" says (one `serve` per file), so the same test and bench code runs
 * against the embedded default too.
 *
 * Every node is a peer process (test/support/peer-process.ts): stopAll() stops them (SIGTERM, then
 * SIGKILL after a grace period), and peer-cleanup / the worker's exit hook stop any a failing test
 * left behind.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { freePort } from './free-port.js';
import { ensureBuilt, GatewayProcess, REPO_ROOT, writeGatewayConfig } from './gateway-process.js';

const run = promisify(execFile);
const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
const STOP_GRACE_MS = 15_000;

export type ClusterDatabase = { kind: 'postgres'; url: string } | { kind: 'sqlite'; path: string };

export interface CarrierOptions {
  host: string;
  port: number;
  /** The carrier's bind limit for the whole cluster (the transport's `binds`). */
  binds: number;
  /** submit_sm in flight per bind. */
  window: number;
  /** The cluster's cap, split over the binds. */
  maxPerSecond: number;
  systemId?: string;
  password?: string;
}

export interface ClusterAccountOptions {
  webhookUrl: string;
  webhookSecret: string;
  /** A sender id added to the client (type 0). */
  sender: string;
}

export interface ClusterNodesOptions {
  /** Where the configs, the key file (and a SQLite database) go; the caller removes it. */
  dir: string;
  database: ClusterDatabase;
  nodes: number;
  carrier: CarrierOptions;
  account: ClusterAccountOptions;
  /** More top-level config sections (engine, processing, webhooks...), the same for every node. */
  extraConfig?: Record<string, unknown>;
  /** Node options per node (e.g. --cpu-prof). */
  nodeArgs?: (index: number) => string[];
  logLevel?: 'info' | 'debug';
}

export interface ClusterAccount {
  clientName: string;
  username: string;
  token: string;
}

/** Runs `smsgate ARGS --config FILE`; rejects with its stderr on a non-zero exit. */
export async function smsgateCli(configPath: string, ...args: string[]): Promise<string> {
  ensureBuilt();
  try {
    const { stdout } = await run(process.execPath, [CLI, ...args, '--config', configPath], { cwd: REPO_ROOT, timeout: 60_000 });
    return stdout;
  } catch (err) {
    const failed = err as { code?: number; stderr?: string };
    throw new Error(`smsgate ${args.join(' ')} failed (exit ${failed.code}): ${failed.stderr ?? ''}`);
  }
}

export class ClusterNode {
  private gateway: GatewayProcess | undefined;
  /** Log lines of every run of this node, oldest first (a restarted node keeps its old ones). */
  private readonly earlierLogLines: string[] = [];

  constructor(
    readonly index: number,
    readonly configPath: string,
    readonly adminUrl: string,
    private readonly nodeArgs: string[],
  ) {}

  /** Spawns `smsgate serve` for this node and waits for it to listen. */
  async start(): Promise<void> {
    if (this.gateway !== undefined) this.earlierLogLines.push(...this.gateway.logLines);
    this.gateway = await GatewayProcess.spawn(this.configPath, { nodeArgs: this.nodeArgs, startTimeoutMs: 60_000 });
  }

  private get running(): GatewayProcess {
    if (this.gateway === undefined) throw new Error(`node ${this.index} was never started`);
    return this.gateway;
  }

  get baseUrl(): string {
    return this.running.baseUrl;
  }

  get pid(): number {
    return this.running.pid;
  }

  get logLines(): string[] {
    return [...this.earlierLogLines, ...(this.gateway?.logLines ?? [])];
  }

  get exited(): boolean {
    return this.gateway === undefined || hasExited(this.gateway.pid);
  }

  kill(signal: NodeJS.Signals): void {
    this.running.kill(signal);
  }

  waitForExit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.running.waitForExit();
  }

  /** SIGTERM (SIGCONT too, in case it is stopped), SIGKILL after a grace period; the exit code. */
  async stop(): Promise<number | null> {
    const gateway = this.gateway;
    if (gateway === undefined) return null;
    const exit = gateway.waitForExit();
    gateway.kill('SIGCONT');
    gateway.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), STOP_GRACE_MS);
    });
    const first = await Promise.race([exit, late]);
    clearTimeout(timer);
    if (first !== 'late') return first.code;
    gateway.kill('SIGKILL');
    return (await exit).code;
  }

  /** TCP connections this node's process has open to 127.0.0.1:port now (its SMPP binds, say). */
  connectionsTo(port: number): number {
    return establishedConnections(this.pid, port);
  }

  /** The local ports of those connections (to tell its submits at the carrier from other nodes'). */
  localPortsTo(port: number): number[] {
    return localPortsTo(this.pid, port);
  }
}

export class ClusterNodes {
  private constructor(
    readonly nodes: ClusterNode[],
    readonly account: ClusterAccount,
  ) {}

  /** Writes the configs, migrates once, seeds the account, then starts the nodes one after another. */
  static async start(options: ClusterNodesOptions): Promise<ClusterNodes> {
    if (options.database.kind === 'sqlite' && options.nodes !== 1) {
      throw new Error('SQLite runs one smsgate serve per database file (ARCHITECTURE "Stores and nodes"): ask for one node');
    }
    const keyFile = join(options.dir, 'smsgate.key');
    const nodes: ClusterNode[] = [];
    for (let index = 0; index < options.nodes; index++) {
      const nodeDir = join(options.dir, `node-${index}`);
      mkdirSync(nodeDir, { recursive: true });
      const adminPort = await freePort();
      const { path } = writeGatewayConfig(nodeDir, nodeConfig(options, keyFile, adminPort));
      nodes.push(new ClusterNode(index, path, `http://127.0.0.1:${adminPort}`, options.nodeArgs?.(index) ?? []));
    }
    const first = (nodes[0] as ClusterNode).configPath;
    await smsgateCli(first, 'migrate');
    const account = await seedAccount(first, options.account);
    const cluster = new ClusterNodes(nodes, account);
    try {
      for (const node of nodes) await node.start();
    } catch (err) {
      await cluster.stopAll();
      throw err;
    }
    return cluster;
  }

  node(index: number): ClusterNode {
    const node = this.nodes[index];
    if (node === undefined) throw new Error(`no node ${index}`);
    return node;
  }

  /** Stops every node still running; the exit codes by node (null for one that had already gone). */
  async stopAll(): Promise<(number | null)[]> {
    return Promise.all(this.nodes.map((node) => (node.exited ? Promise.resolve(null) : node.stop())));
  }
}

function nodeConfig(options: ClusterNodesOptions, keyFile: string, adminPort: number): Record<string, unknown> {
  const { carrier } = options;
  const database =
    options.database.kind === 'postgres' ? { url: options.database.url, keyFile } : { path: options.database.path, keyFile };
  return {
    database,
    api: { host: '127.0.0.1', port: 0 },
    admin: { host: '127.0.0.1', port: adminPort },
    // info: the "listening on" line is how GatewayProcess finds the API port.
    logging: { level: options.logLevel ?? 'info' },
    ...options.extraConfig,
    transports: [
      {
        name: 'carrier', type: 'smpp', host: carrier.host, port: carrier.port, systemId: carrier.systemId ?? 'esme',
        password: carrier.password ?? 'secret', bindMode: 'transceiver', binds: carrier.binds, window: carrier.window,
        maxPerSecond: carrier.maxPerSecond,
      },
    ],
    routes: [{ prefix: '', transport: 'carrier' }],
  };
}

async function seedAccount(configPath: string, account: ClusterAccountOptions): Promise<ClusterAccount> {
  const clientName = 'acme';
  const username = 'acme-admin';
  await smsgateCli(configPath, 'client', 'create', '--name', clientName, '--webhook-url', account.webhookUrl, '--webhook-secret', account.webhookSecret);
  await smsgateCli(configPath, 'user', 'create', '--client', clientName, '--username', username, '--password', 'correct horse battery staple', '--admin');
  await smsgateCli(configPath, 'sender', 'add', '--client', clientName, '--sender', account.sender, '--type', '0');
  const { token } = JSON.parse(await smsgateCli(configPath, 'token', 'create', '--username', username, '--json')) as { token: string };
  return { clientName, username, token };
}

function hasExited(pid: number): boolean {
  try {
    // A zombie (exited, not yet reaped) still answers kill 0: its state says Z.
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}

/** Established TCP connections of process `pid` to 127.0.0.1:port. */
export function establishedConnections(pid: number, port: number): number {
  return localPortsTo(pid, port).length;
}

/**
 * The local ports of process `pid`'s established TCP connections to 127.0.0.1:port: the socket
 * inodes among its file descriptors (/proc/PID/fd -> socket:[INODE]) matched against
 * /proc/PID/net/tcp (proc(5): hex local and remote address:port, state 01 = ESTABLISHED, inode in
 * the tenth column).
 */
export function localPortsTo(pid: number, port: number): number[] {
  let inodes: Set<string>;
  let table: string;
  try {
    inodes = new Set(
      readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
        try {
          const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
          const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
          return inode === undefined ? [] : [inode];
        } catch {
          return [];
        }
      }),
    );
    table = readFileSync(`/proc/${pid}/net/tcp`, 'utf8');
  } catch {
    return [];
  }
  const remote = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const ports: number[] = [];
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[2] === remote && fields[3] === '01' && inodes.has(fields[9] ?? '')) ports.push(parseInt((fields[1] ?? '').split(':')[1] ?? '', 16));
  }
  return ports;
}

/**
 * Rows of one read-only query against the cluster's database, either backend (SQL both dialects
 * read alike: CAST(COUNT(*) AS INTEGER), no `::`). Opens and closes its own connection.
 */
export async function readRows<T>(database: ClusterDatabase, sql: string): Promise<T[]> {
  if (database.kind === 'postgres') {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  }
  const db = new Sqlite(database.path, { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}
