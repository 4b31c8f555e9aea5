/** Figures helpers for the e2e bench: process CPU and memory from /proc, stages, percentiles, lag. */
import { readFileSync } from 'node:fs';
import type { ProfileSummary } from './cpu-profile.js';
import type { ReceiverEvents, SmscEvents } from './sink-protocol.js';

/** Linux USER_HZ: /proc/<pid>/stat counts CPU time in these ticks (proc(5)). */
const CLOCK_TICKS_PER_SECOND = 100;

function cpuMsOfStat(path: string): number {
  try {
    const stat = readFileSync(path, 'utf8');
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1_000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/**
 * CPU time (user + system, every thread) a live process has used so far, in ms, from
 * /proc/<pid>/stat fields 14 and 15 (proc(5)); 0 once it is gone. On a shared, loaded machine
 * wall-clock rates move with the neighbours' load; CPU time per message is the steadier figure.
 */
export function cpuMsOf(pid: number | undefined): number {
  return pid === undefined ? 0 : cpuMsOfStat(`/proc/${pid}/stat`);
}

export interface ThreadTimes {
  /** On a CPU. */
  cpuMs: number;
  /** Runnable but waiting for a CPU (the other processes on the shared cores). */
  runqueueMs: number;
}

/**
 * The main thread's (the event loop's) time on a CPU and waiting for one, from
 * /proc/<pid>/task/<pid>/schedstat (ns: on cpu, on the runqueue, timeslices; kernel sched-stats.rst).
 * Wall time minus both is time blocked in a syscall (fsync, say) or idle in epoll.
 */
export function mainThreadTimesOf(pid: number | undefined): ThreadTimes {
  if (pid === undefined) return { cpuMs: 0, runqueueMs: 0 };
  try {
    const [cpuNs, waitNs] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
    return { cpuMs: (cpuNs ?? 0) / 1e6, runqueueMs: (waitNs ?? 0) / 1e6 };
  } catch {
    return { cpuMs: 0, runqueueMs: 0 };
  }
}

/** A `Name:   N kB` field of a /proc/<pid>/status text (proc(5)), in bytes; 0 when absent. */
export function statusFieldBytes(status: string, field: string): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
}

/** Peak resident set size of a live process (VmHWM: the kernel keeps the high-water mark), bytes. */
export function peakRssBytesOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    return statusFieldBytes(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmHWM');
  } catch {
    return 0;
  }
}

/** Read and write syscalls a process has made so far (every thread). */
export interface Syscalls {
  reads: number;
  writes: number;
}

/**
 * /proc/<pid>/io syscr and syscw (proc(5)): read(2), write(2) and their vector and positional
 * forms, on sockets and files alike, every thread; zero once the process is gone. The socket
 * writes a message costs (PDUs and webhook requests corked or not) show here, beside the
 * database's page writes and fsync-bound commits.
 */
export function syscallsOf(pid: number | undefined): Syscalls {
  if (pid === undefined) return { reads: 0, writes: 0 };
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    return { reads: Number(/^syscr:\s+(\d+)/m.exec(io)?.[1] ?? 0), writes: Number(/^syscw:\s+(\d+)/m.exec(io)?.[1] ?? 0) };
  } catch {
    return { reads: 0, writes: 0 };
  }
}

export function syscallsBetween(atStart: Syscalls, atEnd: Syscalls): Syscalls {
  return { reads: atEnd.reads - atStart.reads, writes: atEnd.writes - atStart.writes };
}

export function loadAverage1m(): number {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  return percentileOfSorted(sorted, p);
}

function percentileOfSorted(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

/** One stage of the pipeline: how many messages passed it, and when the first and last did (ms after the start). */
export interface Stage {
  count: number;
  firstAtMs: number;
  lastAtMs: number;
}

/** A stage from its event times (monoMs), relative to the run's start. */
export function stageOf(eventTimesMs: readonly number[], startMs: number): Stage {
  let first = Infinity;
  let last = -Infinity;
  for (const t of eventTimesMs) {
    if (t < first) first = t;
    if (t > last) last = t;
  }
  if (eventTimesMs.length === 0) return { count: 0, firstAtMs: Number.NaN, lastAtMs: Number.NaN };
  return { count: eventTimesMs.length, firstAtMs: first - startMs, lastAtMs: last - startMs };
}

/** A stage that is one moment for every message (the POST answered, the campaign ready). */
export function stageAt(count: number, atMs: number): Stage {
  return { count, firstAtMs: atMs, lastAtMs: atMs };
}

export interface LagFigures {
  matched: number;
  /** Webhooks whose recipient had no stored receipt, and receipts whose webhook never came. */
  unmatchedWebhooks: number;
  unmatchedReceipts: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** p99 of the receipts stored in each fifth of the run (by store time): does the lag grow? */
  p99ByFifthMs: number[];
}

/**
 * Receipt stored -> webhook 2xx, per recipient. Stored = the SMSC got the gateway's deliver_sm_resp
 * (sent only after the receipt was committed); 2xx = the receiver answered the webhook. Both are
 * matched by the recipient's number (each recipient of the bench's campaign is a distinct number
 * and has one part, so one receipt and one webhook); the first of each counts.
 */
export function lagOf(stored: { atMs: readonly number[]; recipients: readonly string[] }, acknowledged: { atMs: readonly number[]; recipients: readonly string[] }): LagFigures {
  const storedAt = new Map<string, number>();
  stored.recipients.forEach((recipient, i) => {
    if (!storedAt.has(recipient)) storedAt.set(recipient, stored.atMs[i] as number);
  });
  const pairs: { storedAtMs: number; lagMs: number }[] = [];
  const seen = new Set<string>();
  let unmatchedWebhooks = 0;
  acknowledged.recipients.forEach((recipient, i) => {
    if (seen.has(recipient)) return;
    seen.add(recipient);
    const at = storedAt.get(recipient);
    if (at === undefined) unmatchedWebhooks++;
    else pairs.push({ storedAtMs: at, lagMs: (acknowledged.atMs[i] as number) - at });
  });
  const lags = Float64Array.from(pairs, (p) => p.lagMs).sort();
  pairs.sort((a, b) => a.storedAtMs - b.storedAtMs);
  const fifths: number[] = [];
  for (let f = 0; f < 5; f++) {
    const slice = pairs.slice(Math.floor((f * pairs.length) / 5), Math.floor(((f + 1) * pairs.length) / 5));
    fifths.push(percentile(slice.map((p) => p.lagMs), 99));
  }
  return {
    matched: pairs.length,
    unmatchedWebhooks,
    unmatchedReceipts: storedAt.size - pairs.length,
    p50Ms: percentileOfSorted(lags, 50),
    p99Ms: percentileOfSorted(lags, 99),
    maxMs: lags.length === 0 ? Number.NaN : (lags[lags.length - 1] as number),
    p99ByFifthMs: fifths,
  };
}

/**
 * What the sinks saw, the same for any gateway: submits and receipts stored at the SMSC, webhooks
 * 2xx at the receiver, and the receipt -> webhook lag between them.
 */
export function sinkFigures(smsc: SmscEvents, receiver: ReceiverEvents, startedAtMs: number): { submitted: Stage; receipts: Stage; webhooks: Stage; lag: LagFigures } {
  return {
    submitted: stageOf(smsc.submittedAtMs, startedAtMs),
    receipts: stageOf(smsc.acknowledgedAtMs, startedAtMs),
    webhooks: stageOf(receiver.acknowledgedAtMs, startedAtMs),
    lag: lagOf(
      { atMs: smsc.acknowledgedAtMs, recipients: smsc.acknowledgedRecipients },
      { atMs: receiver.acknowledgedAtMs, recipients: receiver.acknowledgedRecipients },
    ),
  };
}

export interface EventLoopFigures {
  p99Ms: number;
  maxMs: number;
  /** Where the figure came from. */
  source: string;
}

export interface RunFigures {
  /** e.g. "smsgate", "kannel 100x4". */
  label: string;
  /** How this gateway was set up, one line. */
  setup: string;
  messages: number;
  stages: { accepted: Stage; ready: Stage | undefined; submitted: Stage; receipts: Stage; webhooks: Stage };
  /** First request sent to the last webhook (dlr-url callback) answered 2xx. */
  endToEndMs: number;
  lag: LagFigures;
  /** CPU of the gateway's processes over the run (smsgate serve; bearerbox + smsbox), every thread. */
  gatewayCpuMs: number;
  /** smsgate's main thread (event loop) alone over the run. */
  mainThread: ThreadTimes | undefined;
  eventLoop: EventLoopFigures | undefined;
  /** The gateway's own smsgate_webhook_lag_seconds histogram (its commit to the 2xx): shares within 1 s and 2.5 s. */
  ownWebhookLag: { count: number; within1s: number; within2500ms: number } | undefined;
  /** The gateway's read and write syscalls over the run (smsgate serve; bearerbox + smsbox). */
  syscalls: Syscalls;
  /** smsgate serve's VmHWM; Kannel: bearerbox's + smsbox's. */
  peakRssBytes: number;
  harnessCpuMs: { smsc: number; receiver: number; driver: number };
  api: { p50Ms: number; p99Ms: number; count: number } | undefined;
  profile: ProfileSummary | undefined;
  loadAverage: { atStart: number; atEnd: number };
  notes: string[];
}

export function endToEndPerSecond(run: RunFigures): number {
  return run.messages / (run.endToEndMs / 1_000);
}

export function cpuUsPerMessage(run: RunFigures): number {
  return (run.gatewayCpuMs * 1_000) / run.messages;
}
