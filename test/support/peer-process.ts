/**
 * Every peer process a test starts (the Perl SMSC, socat for the modem emulator, `smsgate serve`
 * children) is spawned here, so that none outlives its test run:
 * - in its own process group (detached), so killPeer() stops the peer and anything it started;
 * - under `setpriv --pdeathsig TERM`, so it is told to stop when the test worker dies, even by
 *   SIGKILL on a timeout (Linux prctl PR_SET_PDEATHSIG; setpriv execs the peer, so the pid is the
 *   peer's own);
 * - optionally under `timeout`, a maximum runtime for long-lived peers;
 * - marked with SMSGATE_TEST_PEER (the run id from the global setup), which the end-of-run check
 *   (test/support/leftover-peers.ts) looks for.
 * Tests stop their peers themselves in afterEach/afterAll. Behind that, test/support/peer-cleanup.ts
 * (a vitest setup file) stops after each test the peers that test started and after each file
 * the rest, also when a test failed or timed out; the worker's exit hook below is the last net.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** Set on every peer: the value is the run id (SMSGATE_TEST_RUN_ID) of the test run that started it. */
export const PEER_MARKER_ENV = 'SMSGATE_TEST_PEER';
/** Set by the global setup in the main vitest process and inherited by the workers. */
export const RUN_ID_ENV = 'SMSGATE_TEST_RUN_ID';

export interface PeerSpawnOptions extends SpawnOptions {
  /** Kill the peer after this many seconds whatever happens (coreutils timeout, then SIGKILL 5 s later). */
  maxRuntimeS?: number;
}

const live = new Set<ChildProcess>();
/** Peers started by the running test (not by a beforeAll); null outside a test. */
let testPeers: Set<ChildProcess> | null = null;
/** How long a peer gets to exit on SIGTERM before its group is sent SIGKILL. */
const STOP_GRACE_MS = 5_000;

export function spawnPeer(command: string, args: readonly string[], options: PeerSpawnOptions = {}): ChildProcess {
  const { maxRuntimeS, ...spawnOptions } = options;
  const env = { ...(spawnOptions.env ?? process.env), [PEER_MARKER_ENV]: process.env[RUN_ID_ENV] ?? 'unscoped' };
  const limit = maxRuntimeS === undefined ? [] : ['timeout', '--kill-after=5', String(maxRuntimeS)];
  const child = spawn('setpriv', ['--pdeathsig', 'TERM', '--', ...limit, command, ...args], { ...spawnOptions, env, detached: true });
  live.add(child);
  testPeers?.add(child);
  child.once('exit', () => live.delete(child));
  child.once('error', () => live.delete(child));
  return child;
}

/** Signals the peer's whole process group; a peer that already exited is left alone. */
export function killPeer(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already (ESRCH): nothing left to stop.
  }
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null || child.pid === undefined;
}

/** SIGTERM to each peer's group, SIGKILL after STOP_GRACE_MS; resolves once every one has exited. */
export async function stopPeers(peers: Iterable<ChildProcess>): Promise<void> {
  await Promise.all(
    [...peers].filter((child) => !hasExited(child)).map(async (child) => {
      const exited = new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.once('error', () => resolve());
      });
      killPeer(child, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), STOP_GRACE_MS);
      });
      if ((await Promise.race([exited, graceOver])) === 'late') {
        killPeer(child, 'SIGKILL');
        await exited;
      }
      clearTimeout(timer);
    }),
  );
}

/** Called before each test: peers spawned from here on belong to it. */
export function beginTestPeers(): void {
  testPeers = new Set();
}

/** Called after each test: stops the peers it started that are still running. */
export async function endTestPeers(): Promise<void> {
  const peers = testPeers ?? new Set<ChildProcess>();
  testPeers = null;
  await stopPeers(peers);
}

/** Peers this worker started that have not exited yet. */
export function livePeers(): readonly ChildProcess[] {
  return [...live];
}

// A test file that failed or timed out before its afterAll ran: its worker exits, its peers go too.
process.once('exit', () => {
  for (const child of live) killPeer(child, 'SIGKILL');
});
