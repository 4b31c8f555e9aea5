/**
 * How the sender reports an outbox it cannot reach (a PostgreSQL failover drops every connection
 * for seconds): the shared FailureLog (src/common/failure-log.ts) with the sender's messages. The
 * first failure is logged at once, then at most one line per intervalMs however often the sender
 * tries (a poll every 200 ms would otherwise log five lines a second), each saying how many
 * failures it stands for; the first success after it logs the end of the outage. Time is the
 * sender's clock.
 */
import { FailureLog } from '../common/failure-log.js';
import type { Logger } from '../common/log.js';

export const OUTAGE_LOG_INTERVAL_MS = 30_000;

const UNREACHABLE = 'webhook outbox unreachable; retrying (one line per interval while it lasts)';

export class OutageLog {
  private readonly log: FailureLog;

  constructor(logger: Logger, now: () => number, intervalMs = OUTAGE_LOG_INTERVAL_MS) {
    this.log = new FailureLog(logger, 'the webhook outbox', intervalMs, now, {
      level: 'error',
      recoveredLevel: 'info',
      messages: { failed: UNREACHABLE, stillFailing: UNREACHABLE, recovered: 'webhook outbox reachable again' },
    });
  }

  /** An outbox call failed: `what` is what could not be done (a claim, a results write...). */
  failed(err: unknown, what: string, fields: Record<string, unknown> = {}): void {
    this.log.failed(err, { what, ...fields });
  }

  /** An outbox call succeeded: ends an outage, if one was going on. */
  succeeded(): void {
    this.log.recovered();
  }
}
