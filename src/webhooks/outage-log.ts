/**
 * How the sender reports an outbox it cannot reach (issue 11 item 5: a PostgreSQL failover drops
 * every connection for seconds): the first failure is logged at once, then at most one line per
 * intervalMs however often the sender tries (a poll every 200 ms would otherwise log five lines a
 * second), each saying how many failures it stands for; the first success after it logs the end of
 * the outage. Time is the sender's clock.
 */
import type { Logger } from '../log.js';

export const OUTAGE_LOG_INTERVAL_MS = 30_000;

export class OutageLog {
  private failingSinceMs: number | null = null;
  private lastLoggedAtMs = 0;
  private unlogged = 0;

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly intervalMs = OUTAGE_LOG_INTERVAL_MS,
  ) {}

  /** An outbox call failed: `what` is what could not be done (a claim, a results write...). */
  failed(err: unknown, what: string, fields: Record<string, unknown> = {}): void {
    const nowMs = this.now();
    if (this.failingSinceMs !== null && nowMs - this.lastLoggedAtMs < this.intervalMs) {
      this.unlogged += 1;
      return;
    }
    this.failingSinceMs ??= nowMs;
    this.lastLoggedAtMs = nowMs;
    const failuresSinceLastLine = this.unlogged + 1;
    this.unlogged = 0;
    this.logger.error({ err, what, failuresSinceLastLine, failingForMs: nowMs - this.failingSinceMs, ...fields },
      'webhook outbox unreachable; retrying (one line per interval while it lasts)');
  }

  /** An outbox call succeeded: ends an outage, if one was going on. */
  succeeded(): void {
    if (this.failingSinceMs === null) return;
    const nowMs = this.now();
    this.logger.info({ failedForMs: nowMs - this.failingSinceMs, failuresSinceLastLine: this.unlogged }, 'webhook outbox reachable again');
    this.failingSinceMs = null;
    this.unlogged = 0;
  }
}
