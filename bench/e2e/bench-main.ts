/**
 * The command-line frame of bench:e2e and bench:cluster: option errors (exit 2 with the usage
 * line), the machine line every printout starts with, and an exit on Ctrl-C or a kill that lets
 * peer-process.ts's exit hook SIGKILL every child still running.
 */
import { cpus, loadavg, totalmem } from 'node:os';

/** A bad command line: printed with the usage line, exit 2. */
export class UsageError extends Error {}

/** An option's integer value, at least `min`; a UsageError naming the flag otherwise. */
export function positiveInt(flag: string, raw: string | undefined, min = 1): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new UsageError(`${flag} needs an integer >= ${min}, got ${raw ?? 'nothing'}`);
  return value;
}

/** Which machine the figures are from (the cores are shared, so the time of day matters too). */
export function machineLine(): string {
  return `machine: ${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, ${new Date().toISOString()}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (1/5/15 min)`;
}

/** Runs the bench's main and exits: 0 when it finished, 2 on a UsageError, 1 on anything else. */
export function runBenchMain(main: () => Promise<void>, usage: string): void {
  // Ctrl-C or a kill: exit, and peer-process.ts's exit hook SIGKILLs every child still running.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => process.exit(130));

  main().then(
    () => process.exit(0),
    (err: unknown) => {
      if (err instanceof UsageError) {
        console.error(`${err.message}\n${usage}`);
        process.exit(2);
      }
      console.error(err);
      process.exit(1);
    },
  );
}
