/**
 * How far V8 lets `smsgate serve`'s heap grow between full collections. On a machine with 16 GB or
 * more, V8 sizes the old generation for a 4 GB limit and lets it grow up to four times its live
 * size before marking it again. The gateway's live set is small (about 30 MB on the main thread
 * during a 100,000-recipient campaign) but it promotes a steady stream of medium-lived objects
 * (parts in flight, receipts waiting for their part, webhook batches), so the old generation filled
 * with garbage to 131 MB before each full collection (bench:e2e at 100,000), and the process's peak
 * RSS went past the 300 MB the appliance is sized for. Growing by at most the live size again keeps
 * it near 60 MB for the price of a full collection every few seconds, each marking only the live
 * set (mostly on V8's helper thread).
 *
 * The flag is process-wide (the webhook sender thread's isolate follows it too) and read at each
 * collection, so setting it once at start takes effect; an operator's own
 * `--heap-growing-percent` (node's arguments or NODE_OPTIONS) is left as given.
 */
import v8 from 'node:v8';

/** The old generation's next limit is (1 + this / 100) times what survived the last full collection. */
export const HEAP_GROWING_PERCENT = 100;

const OPERATOR_FLAG = /(^|\s)--heap[-_]growing[-_]percent(=|\s|$)/;

/** The V8 flag to set, or undefined when the operator already chose one. Pure: the caller applies it. */
export function heapGrowthFlag(execArgv: readonly string[], nodeOptions: string | undefined): string | undefined {
  if (execArgv.some((arg) => OPERATOR_FLAG.test(arg))) return undefined;
  if (nodeOptions !== undefined && OPERATOR_FLAG.test(nodeOptions)) return undefined;
  return `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/** Applies heapGrowthFlag to this process; returns the flag set, if any. */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv, nodeOptions: string | undefined = process.env['NODE_OPTIONS']): string | undefined {
  const flag = heapGrowthFlag(execArgv, nodeOptions);
  if (flag !== undefined) v8.setFlagsFromString(flag);
  return flag;
}
