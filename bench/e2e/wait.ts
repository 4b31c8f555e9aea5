/** Waiting on conditions with a deadline (never a bare sleep), and free ports, for the e2e bench. */
import { createServer } from 'node:net';
import { pollUntil } from '../../test/support/poll-until.js';
import { monoMs } from './clock.js';
import type { SinkProcess } from './sinks.js';

export { portAccepts } from '../../test/support/poll-until.js';

/** A whole run (one gateway, one size) gives up after this long. */
const RUN_TIMEOUT_MS = 30 * 60_000;
const POLL_MS = 20;

export interface WaitProgress {
  label: string;
  sinks: readonly SinkProcess[];
  startedAtMs: number;
  progressEveryMs: number;
  line: () => string;
  /** Why the gateway under test can no longer finish (its process exited), or undefined. */
  gatewayGone: () => string | undefined;
}

/** Polls until count() reaches target, writing a progress line to stderr now and then; fails if a sink died. */
export async function waitForCount(count: () => number, target: number, progress: WaitProgress): Promise<void> {
  const deadline = monoMs() + RUN_TIMEOUT_MS;
  let nextProgressAt = monoMs() + progress.progressEveryMs;
  while (count() < target) {
    for (const sink of progress.sinks) sink.assertAlive();
    const gone = progress.gatewayGone();
    if (gone !== undefined) throw new Error(`${progress.label}: ${gone} at ${count()} of ${target}`);
    const now = monoMs();
    if (now > deadline) throw new Error(`${progress.label}: gave up after ${RUN_TIMEOUT_MS / 60_000} min at ${count()} of ${target}`);
    if (now >= nextProgressAt) {
      nextProgressAt += progress.progressEveryMs;
      process.stderr.write(`  ${progress.label} t=${((now - progress.startedAtMs) / 1_000).toFixed(0)}s ${progress.line()}\n`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  await pollUntil(check, timeoutMs, () => what, POLL_MS);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
