/**
 * vitest global setup: gives the run an id that every worker and every process
 * they spawn inherits (SMSGATE_TEST_RUN_ID; spawnPeer also sets SMSGATE_TEST_PEER to it), and at
 * the end of the run lists the processes still carrying it. Any such process is a peer some test
 * did not stop: they are printed, killed, and the run fails. Only this run's processes match, so
 * other test runs on the machine are never touched.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { PEER_MARKER_ENV, RUN_ID_ENV } from './peer-process.js';

export interface LeftoverProcess {
  pid: number;
  command: string;
}

/**
 * Processes (other than this one) whose environment carries the run's id; `exceptChildrenOf`
 * leaves out that process's direct children (the main vitest process's workers).
 */
export function processesOfRun(runId: string, exceptChildrenOf?: number): LeftoverProcess[] {
  const found: LeftoverProcess[] = [];
  const markers = [`${RUN_ID_ENV}=${runId}`, `${PEER_MARKER_ENV}=${runId}`];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (exceptChildrenOf !== undefined && parentPid(pid) === exceptChildrenOf) continue;
      const environ = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      if (!environ.some((variable) => markers.includes(variable))) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      // A zombie has an empty cmdline: it is already dead, only not yet reaped.
      if (command !== '') found.push({ pid, command });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** /proc/PID/stat: "pid (comm) state ppid ...", comm may hold spaces and parentheses. */
function parentPid(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** Waits up to graceMs for peers still shutting down (a SIGTERM in the last afterAll) before judging. */
async function leftoversAfter(runId: string, graceMs: number): Promise<LeftoverProcess[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    // The workers (and vite's helpers) are the main process's own children, not peers.
    const leftovers = processesOfRun(runId, process.pid);
    if (leftovers.length === 0 || Date.now() >= deadline) return leftovers;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export default function setup(): () => Promise<void> {
  const runId = randomUUID();
  process.env[RUN_ID_ENV] = runId;
  return async () => {
    const leftovers = await leftoversAfter(runId, 5_000);
    if (leftovers.length === 0) return;
    for (const { pid } of leftovers) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Exited between the listing and the kill.
      }
    }
    const list = leftovers.map(({ pid, command }) => `  pid ${pid}: ${command}`).join('\n');
    // vitest reports an error thrown here but keeps its exit status: set the status as well.
    process.exitCode = 1;
    throw new Error(`${leftovers.length} process(es) started by this test run were still running at its end (now killed):\n${list}`);
  };
}
