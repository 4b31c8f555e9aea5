/** Small figures helpers for the e2e bench: percentiles, rates, CPU time, and a progress clock. */
import { readFileSync } from 'node:fs';

/** Linux USER_HZ: /proc/<pid>/stat counts CPU time in these ticks (proc(5)). */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system) a live process has used so far, in ms, from /proc/<pid>/stat fields
 * 14 and 15 (proc(5)); 0 once it is gone. On a shared, loaded machine wall-clock rates move with
 * the neighbours' load; CPU time per message is the steadier figure to compare two gateways by.
 */
export function cpuMsOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1_000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}
export function percentile(samplesMs: readonly number[], p: number): number {
  if (samplesMs.length === 0) return Number.NaN;
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

/**
 * Records when a counter reaches each value, so a rate can be measured between the first and the
 * last event instead of over a window that includes start-up.
 */
export class CounterClock {
  firstAtMs: number | undefined;
  lastAtMs: number | undefined;
  private last = 0;

  constructor(private readonly read: () => number) {}

  sample(nowMs: number): void {
    const value = this.read();
    if (value > 0 && this.firstAtMs === undefined) this.firstAtMs = nowMs;
    if (value > this.last) {
      this.lastAtMs = nowMs;
      this.last = value;
    }
  }

  get value(): number {
    return this.last;
  }

  /** Events per second between the first and the last sample that saw a change. */
  perSecond(): number {
    if (this.firstAtMs === undefined || this.lastAtMs === undefined || this.lastAtMs === this.firstAtMs) return Number.NaN;
    return this.last / ((this.lastAtMs - this.firstAtMs) / 1_000);
  }
}

export interface RunFigures {
  label: string;
  messages: number;
  submitsPerSecond: number;
  receiptsPerSecond: number;
  webhooksPerSecond: number;
  /** From the first request sent to the last webhook/callback received. */
  timeToLastWebhookMs: number;
  endToEndPerSecond: number;
  peakRssMb: number;
  apiP50Ms: number;
  apiP99Ms: number;
  acceptMs: number;
  /** CPU time the gateway's own processes used for the run (smsgate serve; bearerbox + smsbox). */
  gatewayCpuMs: number;
  /** CPU time of this bench process (test SMSC, webhook receiver, HTTP clients) over the same run. */
  harnessCpuMs: number;
  notes: string[];
}

export function formatTable(runs: readonly RunFigures[]): string {
  const rows: [string, (r: RunFigures) => string][] = [
    ['messages', (r) => String(r.messages)],
    ['accept (POST / sendsms) ms', (r) => r.acceptMs.toFixed(0)],
    ['parts submitted/s', (r) => r.submitsPerSecond.toFixed(0)],
    ['receipts acknowledged/s', (r) => r.receiptsPerSecond.toFixed(0)],
    ['webhooks received/s', (r) => r.webhooksPerSecond.toFixed(0)],
    ['time to last webhook s', (r) => (r.timeToLastWebhookMs / 1_000).toFixed(1)],
    ['end-to-end messages/s', (r) => r.endToEndPerSecond.toFixed(0)],
    ['peak RSS MB', (r) => r.peakRssMb.toFixed(0)],
    ['gateway CPU s', (r) => (r.gatewayCpuMs / 1_000).toFixed(1)],
    ['gateway CPU ms per 1k messages', (r) => ((r.gatewayCpuMs / r.messages) * 1_000).toFixed(0)],
    ['gateway CPU % of one core', (r) => ((100 * r.gatewayCpuMs) / r.timeToLastWebhookMs).toFixed(0)],
    ['harness (SMSC, receiver) CPU %', (r) => ((100 * r.harnessCpuMs) / r.timeToLastWebhookMs).toFixed(0)],
    ['API p50 ms while running', (r) => (Number.isNaN(r.apiP50Ms) ? '-' : r.apiP50Ms.toFixed(1))],
    ['API p99 ms while running', (r) => (Number.isNaN(r.apiP99Ms) ? '-' : r.apiP99Ms.toFixed(1))],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  const header = `${''.padEnd(width)} | ${runs.map((r) => r.label.padStart(12)).join(' | ')}`;
  const lines = rows.map(([name, cell]) => `${name.padEnd(width)} | ${runs.map((r) => cell(r).padStart(12)).join(' | ')}`);
  return [header, '-'.repeat(header.length), ...lines].join('\n');
}
