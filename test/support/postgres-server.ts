/**
 * A throwaway PostgreSQL 15 for one test file (ARCHITECTURE "Stores and nodes"):
 * a copy of a data directory initdb made once (as the postgres user; see templateDataDir) in a
 * temporary directory, then the server itself, owned by the test
 * (no pg_ctl, which would leave it unowned), listening on 127.0.0.1 and a free port. Each test takes
 * a fresh database (CREATE DATABASE, a copy of template1: tens of ms) instead of a fresh server.
 *
 * How it never outlives its test file (test/support/peer-process.ts):
 * - the server runs under a small root shell started by spawnPeer: its own process group, marked
 *   with the run id, and given SIGTERM by `setpriv --pdeathsig` when the test worker dies. The shell
 *   is needed because the kernel clears a parent-death signal when the uid changes
 *   (prctl(2) PR_SET_PDEATHSIG), so postgres itself, running as the postgres user, cannot carry one;
 *   the shell stays root and turns its SIGTERM/SIGINT into postgres's fast shutdown (SIGINT);
 * - stop() asks for a fast shutdown of the group and waits for it (SIGKILL after a grace period);
 *   the peer-cleanup setup file and the worker's exit hook stop it too if a test file never got to;
 * - the directory is removed when the server process exits, however it ends.
 */
import { execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';
import { killPeer, spawnPeer } from './peer-process.js';

const PG_BIN = '/usr/lib/postgresql/15/bin';
const SUPERUSER = 'smsgate';
const READY_DEADLINE_MS = 30_000;
const STOP_GRACE_MS = 10_000;

const run = promisify(execFile);

export interface PostgresServer {
  readonly host: string;
  readonly port: number;
  /** The temporary directory (data directory and socket), removed when the server exits. */
  readonly dir: string;
  /** The supervising shell (root, parent-death signal set) of the server running now; postgres is its child. */
  readonly pid: number;
  /** postgresql://smsgate@127.0.0.1:PORT/NAME (trust authentication: no password). */
  urlFor(database: string): string;
  /**
   * Fast shutdown (every session is ended, as in a failover or a restart), down for `downMs`, then
   * the same data directory served again on the same port; resolves once it accepts connections.
   */
  restart(downMs?: number): Promise<void>;
  /**
   * SIGSTOP to the postmaster and every backend for `frozenMs`, then SIGCONT: the server neither
   * answers nor closes a session meanwhile (a stalled disk, a VM paused), so clients see silence,
   * not a reset.
   */
  freeze(frozenMs: number): Promise<void>;
  /** Creates a new empty database and returns its URL. */
  createDatabase(): Promise<string>;
  /** Fast shutdown, waits for the exit, removes the directory. Safe to call twice. */
  stop(): Promise<void>;
}

// Run by `sh -c SCRIPT sh ARGS...`: starts postgres as the postgres user, forwards a stop as a fast
// shutdown, and exits with postgres's status once it has gone.
const SUPERVISOR_SCRIPT = `
setpriv --reuid=postgres --regid=postgres --init-groups "$@" &
pid=$!
trap 'kill -INT $pid 2>/dev/null' TERM INT
wait $pid
status=$?
while kill -0 $pid 2>/dev/null; do wait $pid; status=$?; done
exit $status`;

let databaseCounter = 0;

/** initdb's arguments: every server of every test file starts from the same fresh cluster. */
const INITDB_ARGS = ['-U', SUPERUSER, '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8'];
let template: Promise<string> | undefined;

/**
 * A freshly initdb'd data directory, made once and shared by every server started from it (each
 * starts on a copy): in the system's temporary folder, named after the PostgreSQL binaries and
 * initdb's arguments, so test files in other workers (and later runs) find it. initdb runs into a
 * folder of its own which is then renamed into place: rename is atomic, so a reader never sees a
 * half-made one, and of two workers making it at once one rename wins and the other's copy goes.
 */
function templateDataDir(uid: number, gid: number): Promise<string> {
  template ??= (async () => {
    const key = createHash('sha256').update(JSON.stringify([PG_BIN, statSync(`${PG_BIN}/postgres`).mtimeMs, INITDB_ARGS])).digest('hex').slice(0, 16);
    const ready = join(tmpdir(), `smsgate-pg-template-${key}`);
    if (existsSync(join(ready, 'data', 'PG_VERSION'))) return join(ready, 'data');
    const making = mkdtempSync(join(tmpdir(), 'smsgate-pg-template-making-'));
    try {
      chownSync(making, uid, gid);
      // --no-sync and fsync=off below: a throwaway cluster, durability is not what these tests check.
      await run('runuser', ['-u', 'postgres', '--', `${PG_BIN}/initdb`, '-D', join(making, 'data'), ...INITDB_ARGS, '--no-sync']);
      try {
        renameSync(making, ready);
      } catch (err) {
        // Another worker's rename came first (the folder exists and is not empty): use that one.
        if (!existsSync(join(ready, 'data', 'PG_VERSION'))) throw err;
      }
    } finally {
      rmSync(making, { recursive: true, force: true });
    }
    return join(ready, 'data');
  })();
  template.catch(() => {
    template = undefined;
  });
  return template;
}

export async function startPostgres(): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-pg-'));
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  let running: RunningServer | undefined;
  try {
    const { uid, gid } = await postgresIds();
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o755);
    const dataDir = join(dir, 'data');
    // A copy of the run's one initdb'd cluster (owner and modes kept): initdb is seconds of work
    // per server, a copy a fraction of one.
    await run('cp', ['-a', await templateDataDir(uid, gid), dataDir]);
    const port = await freePort();
    const host = '127.0.0.1';
    const urlFor = (database: string): string => `postgresql://${SUPERUSER}@${host}:${port}/${database}`;
    // The directory goes when the server exits, unless restart() is what stopped it.
    let restarting = false;
    const spawnServer = async (): Promise<RunningServer> => {
      const server = spawnPeer('sh', ['-c', SUPERVISOR_SCRIPT, 'postgres-peer', `${PG_BIN}/postgres`, '-D', dataDir, '-p', String(port), '-k', dir,
        '-c', `listen_addresses=${host}`, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off',
        '-c', 'max_connections=200'], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      server.stderr?.on('data', (chunk: Buffer) => {
        if (stderr.length < 16_384) stderr += chunk.toString('utf8');
      });
      const exited = new Promise<void>((resolve) => {
        server.once('exit', () => resolve());
        server.once('error', () => resolve());
      });
      void exited.then(() => {
        if (!restarting) removeDir();
      });
      const started = { child: server, exited };
      running = started;
      await waitUntilAccepting(urlFor('postgres'), server, () => stderr);
      return started;
    };
    const shutDown = async (server: RunningServer): Promise<void> => {
      killPeer(server.child, 'SIGINT');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), STOP_GRACE_MS);
      });
      if ((await Promise.race([server.exited.then(() => 'done' as const), late])) === 'late') {
        killPeer(server.child, 'SIGKILL');
        await server.exited;
      }
      clearTimeout(timer);
    };
    let current = await spawnServer();

    let stopping: Promise<void> | undefined;
    return {
      host,
      port,
      dir,
      get pid() {
        return current.child.pid as number;
      },
      urlFor,
      async createDatabase() {
        databaseCounter += 1;
        const name = `t_${process.pid}_${databaseCounter}`;
        const admin = new pg.Client({ connectionString: urlFor('postgres') });
        await admin.connect();
        try {
          await admin.query(`CREATE DATABASE ${name}`);
        } finally {
          await admin.end();
        }
        return urlFor(name);
      },
      async restart(downMs = 0) {
        if (stopping !== undefined) throw new Error('the server was stopped');
        restarting = true;
        try {
          await shutDown(current);
          if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
          current = await spawnServer();
        } finally {
          restarting = false;
        }
      },
      async freeze(frozenMs: number) {
        // The supervising shell's child is the postmaster; its children are the backends.
        const postmaster = childPids(current.child.pid as number);
        const stopped = [...postmaster, ...postmaster.flatMap(childPids)];
        for (const pid of stopped) process.kill(pid, 'SIGSTOP');
        try {
          await new Promise((resolve) => setTimeout(resolve, frozenMs));
        } finally {
          for (const pid of stopped) process.kill(pid, 'SIGCONT');
        }
      },
      stop() {
        stopping ??= (async () => {
          await shutDown(current);
          removeDir();
        })();
        return stopping;
      },
    };
  } catch (err) {
    if (running !== undefined) {
      killPeer(running.child, 'SIGKILL');
    } else {
      removeDir();
    }
    throw err;
  }
}

interface RunningServer {
  child: ChildProcess;
  exited: Promise<void>;
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Polls a connection until the server accepts one; fails at once if the server exited. */
async function waitUntilAccepting(url: string, server: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + READY_DEADLINE_MS;
  for (;;) {
    if (server.exitCode !== null || server.signalCode !== null) throw new Error(`postgres exited before it was ready:\n${stderr()}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (Date.now() >= deadline) throw new Error(`postgres not ready after ${READY_DEADLINE_MS} ms: ${(err as Error).message}\n${stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The ids of a process's children (pgrep -P); none when it has none. */
function childPids(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split('\n').filter((line) => line !== '').map(Number);
  } catch {
    return [];
  }
}
