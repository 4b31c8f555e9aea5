/**
 * CPU time of a PostgreSQL server and its backends, for bench:cluster's CPU per message. The
 * postmaster's own time plus its reaped children's (backends that exited: /proc stat cutime and
 * cstime) plus every live child's, so a backend that ends during the run moves from one sum to the
 * other without being lost or counted twice (proc(5)).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Linux USER_HZ (proc(5)). */
const CLOCK_TICKS_PER_SECOND = 100;

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime, ticks. */
  ownTicks: number;
  /** cutime + cstime: waited-for children, ticks. */
  childTicks: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after the command name (which may hold spaces): state is the first, ppid the second.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      pid,
      ppid: Number(fields[1]),
      ownTicks: Number(fields[11]) + Number(fields[12]),
      childTicks: Number(fields[13]) + Number(fields[14]),
    };
  } catch {
    return undefined;
  }
}

function allStats(): ProcStat[] {
  return readdirSync('/proc').flatMap((entry) => {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) return [];
    const stat = readStat(pid);
    return stat === undefined ? [] : [stat];
  });
}

/**
 * CPU ms so far of the postgres server under `supervisorPid` (test/support/postgres-server.ts: a
 * shell whose one child is the postmaster): the postmaster, its reaped and its live backends.
 */
export function postgresCpuMs(supervisorPid: number): number {
  const stats = allStats();
  const postmaster = stats.find((s) => s.ppid === supervisorPid);
  if (postmaster === undefined) return 0;
  let ticks = postmaster.ownTicks + postmaster.childTicks;
  for (const s of stats) if (s.ppid === postmaster.pid) ticks += s.ownTicks;
  return (ticks * 1_000) / CLOCK_TICKS_PER_SECOND;
}
