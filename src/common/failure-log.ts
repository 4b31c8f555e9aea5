/**
 * The one way smsgate logs a failure that repeats, without flooding the log: the store refusing
 * writes while the disk is full, a claim or a scheduler pass that keeps failing, the webhook
 * outbox unreachable during a failover, a webhook endpoint whose circuit breaker is open. A full
 * disk used to write 52,000 error lines a minute, and a dead webhook endpoint 2,002 identical
 * lines for 2,000 events (docs/behaviour/metrics-and-logs.md).
 *
 * The first failure is logged at once (with its real cause), then at most one line per intervalMs
 * saying how many failures, and how many of each counted thing (`count`: events held, dead
 * letters...), it stands for, and one line when it works again. Nothing runs on a timer: a summary
 * line is written by the failure or count that finds the interval over, so a quiet failure writes
 * nothing more. Time is an input (`now`), so tests step it.
 */
import type { Logger } from './log.js';

export const FAILURE_LOG_INTERVAL_MS = 30_000;

export type FailureLogLevel = 'info' | 'warn' | 'error';

export interface FailureLogOptions {
  /** The first line's level; default error. */
  level?: FailureLogLevel;
  /** The level of the lines in between; default the first line's. */
  summaryLevel?: FailureLogLevel;
  /** The recovery line's level; default warn. */
  recoveredLevel?: FailureLogLevel;
  /** The three messages; default built from `what` ('<what> failed; retrying ...', '<what> still failing; retrying', '<what> works again'). */
  messages?: { failed: string; stillFailing: string; recovered: string };
  /** Fields on every line (an endpoint's clientId and host...). */
  fields?: Record<string, unknown>;
}

export class FailureLog {
  private failingSinceMs: number | undefined;
  private lastLoggedAtMs = 0;
  private failures = 0;
  private notLogged = 0;
  private lastError: unknown;
  private lastContext: Record<string, unknown> = {};
  /** What `count` tallied since the last line, and in all since the failure began. */
  private countedSinceLine = new Map<string, number>();
  private readonly countedTotal = new Map<string, number>();
  private readonly messages: { failed: string; stillFailing: string; recovered: string };

  constructor(
    private readonly logger: Logger,
    /** What failed, as the start of a sentence: 'committing outcomes and receipts'. */
    private readonly what: string,
    private readonly intervalMs: number = FAILURE_LOG_INTERVAL_MS,
    private readonly now: () => number = Date.now,
    private readonly options: FailureLogOptions = {},
  ) {
    this.messages = options.messages ?? {
      failed: `${what} failed; retrying (further failures are logged at most every ${intervalMs} ms)`,
      stillFailing: `${what} still failing; retrying`,
      recovered: `${what} works again`,
    };
  }

  get failing(): boolean {
    return this.failingSinceMs !== undefined;
  }

  failed(err: unknown, context: Record<string, unknown> = {}): void {
    const nowMs = this.now();
    this.failures++;
    this.lastError = err;
    this.lastContext = context;
    if (this.failingSinceMs === undefined) {
      this.failingSinceMs = nowMs;
      this.lastLoggedAtMs = nowMs;
      this.write(this.options.level ?? 'error', { err, ...context, failuresSinceLastLine: 1, failingForMs: 0 }, this.messages.failed);
      return;
    }
    this.notLogged++;
    this.summariseIfDue(nowMs);
  }

  /**
   * Counts something that happened because of the failure (an event held while a breaker is open,
   * a dead letter) without a line of its own: it is reported in the next summary and the recovery
   * line. Ignored while not failing.
   */
  count(what: string, n = 1): void {
    if (this.failingSinceMs === undefined) return;
    this.countedSinceLine.set(what, (this.countedSinceLine.get(what) ?? 0) + n);
    this.countedTotal.set(what, (this.countedTotal.get(what) ?? 0) + n);
    this.summariseIfDue(this.now());
  }

  /**
   * Writes the summary now if the interval is over and failures or counts are waiting for a line:
   * for a caller with a loop of its own (the webhook sender's passes), so what came after the last
   * line is told even when nothing more fails.
   */
  flush(): void {
    if (this.notLogged === 0 && this.countedSinceLine.size === 0) return;
    this.summariseIfDue(this.now());
  }

  /** Call after a success; logs once if failures came before it. */
  recovered(context: Record<string, unknown> = {}): void {
    if (this.failingSinceMs === undefined) return;
    this.write(
      this.options.recoveredLevel ?? 'warn',
      { ...context, failures: this.failures, failuresSinceLastLine: this.notLogged, failingForMs: this.now() - this.failingSinceMs, ...objectOf(this.countedTotal) },
      this.messages.recovered,
    );
    this.failingSinceMs = undefined;
    this.failures = 0;
    this.notLogged = 0;
    this.lastError = undefined;
    this.countedSinceLine = new Map();
    this.countedTotal.clear();
  }

  private summariseIfDue(nowMs: number): void {
    if (this.failingSinceMs === undefined || nowMs - this.lastLoggedAtMs < this.intervalMs) return;
    this.write(
      this.options.summaryLevel ?? this.options.level ?? 'error',
      {
        err: this.lastError,
        ...this.lastContext,
        failures: this.failures,
        // The failures this line stands for: those not logged since the last line (the one now included).
        failuresSinceLastLine: this.notLogged,
        notLogged: this.notLogged,
        failingForMs: nowMs - this.failingSinceMs,
        ...objectOf(this.countedSinceLine),
      },
      this.messages.stillFailing,
    );
    this.lastLoggedAtMs = nowMs;
    this.notLogged = 0;
    this.countedSinceLine = new Map();
  }

  private write(level: FailureLogLevel, fields: Record<string, unknown>, message: string): void {
    const all = this.options.fields === undefined ? fields : { ...this.options.fields, ...fields };
    this.logger[level](all, message);
  }
}

function objectOf(counts: ReadonlyMap<string, number>): Record<string, number> {
  return Object.fromEntries(counts);
}
