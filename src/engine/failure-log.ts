/**
 * Logs a failure that repeats (the store refusing writes while the disk is full, a claim or a
 * scheduler pass that keeps failing) without flooding the log: the first failure at once, then at
 * most one line per intervalMs saying how many were not logged, and one line when it works again.
 * Issue 9 item 4: a full disk used to write 52,000 error lines a minute.
 */
import type { Logger } from '../log.js';

export const FAILURE_LOG_INTERVAL_MS = 30_000;

export class FailureLog {
  private failingSinceMs: number | undefined;
  private lastLoggedAtMs = 0;
  private failures = 0;
  private notLogged = 0;

  constructor(
    private readonly logger: Logger,
    /** What failed, as the start of a sentence: 'committing outcomes and receipts'. */
    private readonly what: string,
    private readonly intervalMs: number = FAILURE_LOG_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  get failing(): boolean {
    return this.failingSinceMs !== undefined;
  }

  failed(err: unknown, context: Record<string, unknown> = {}): void {
    const nowMs = this.now();
    this.failures++;
    if (this.failingSinceMs === undefined) {
      this.failingSinceMs = nowMs;
      this.lastLoggedAtMs = nowMs;
      this.logger.error({ err, ...context }, `${this.what} failed; retrying (further failures are logged at most every ${this.intervalMs} ms)`);
      return;
    }
    if (nowMs - this.lastLoggedAtMs < this.intervalMs) {
      this.notLogged++;
      return;
    }
    this.logger.error(
      { err, ...context, failures: this.failures, notLogged: this.notLogged, failingForMs: nowMs - this.failingSinceMs },
      `${this.what} still failing; retrying`,
    );
    this.lastLoggedAtMs = nowMs;
    this.notLogged = 0;
  }

  /** Call after a success; logs once if failures came before it. */
  recovered(context: Record<string, unknown> = {}): void {
    if (this.failingSinceMs === undefined) return;
    this.logger.warn({ ...context, failures: this.failures, failingForMs: this.now() - this.failingSinceMs }, `${this.what} works again`);
    this.failingSinceMs = undefined;
    this.failures = 0;
    this.notLogged = 0;
  }
}
