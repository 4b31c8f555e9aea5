/**
 * Waiting on a condition with a deadline (never a bare sleep), for the tests and the benches: one
 * loop, and one "does the port accept yet" check for peers started as processes.
 */
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';

/** Polls `check` every `pollMs` until it holds; throws naming `what()` once `timeoutMs` have passed (a monotonic clock). */
export async function pollUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: () => string, pollMs = 20): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** True once something accepts TCP connections on 127.0.0.1:port. */
export function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
