/**
 * The running gateway's check of `credits.lowThreshold`: every few seconds it has the store move
 * each client's low mark (StatusQueries.settleLowCredits, the decision in src/accounts/low-credits.ts) and
 * logs the crossings that call reported: a warning naming the client and its available credits
 * when it fell below the threshold, an info line when it came back to it or above. The mark is
 * stored (client_credits.low_since), so a crossing is logged once, whatever restarts come between,
 * and once for a whole cluster: only the node whose transaction changed the mark logs it.
 */
import { BackgroundWorker } from '../common/background-worker.js';
import { FAILURE_LOG_INTERVAL_MS, FailureLog } from '../common/failure-log.js';
import type { Logger } from '../common/log.js';
import type { Async } from '../store/ports.js';
import type { StatusQueries } from '../store/sqlite/status-store.js';

/** How often the check runs: a credit change (a top-up, a campaign's charges) is seen within this. */
export const LOW_CREDITS_CHECK_INTERVAL_MS = 5_000;

export interface LowCreditsWatchDeps {
  status: Pick<Async<StatusQueries>, 'settleLowCredits'>;
  threshold: number;
  logger: Logger;
  now: () => number;
  intervalMs?: number;
}

export class LowCreditsWatch {
  private readonly worker: BackgroundWorker;
  private readonly failures: FailureLog;

  constructor(private readonly deps: LowCreditsWatchDeps) {
    this.failures = new FailureLog(deps.logger, 'checking credits.lowThreshold', FAILURE_LOG_INTERVAL_MS, deps.now);
    this.worker = new BackgroundWorker({
      intervalMs: deps.intervalMs ?? LOW_CREDITS_CHECK_INTERVAL_MS,
      pass: () => this.check(),
      onError: (err) => this.failures.failed(err),
    });
  }

  start(): void {
    this.worker.start();
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }

  /** One check: the crossings this node's transaction wrote, logged. */
  async check(): Promise<void> {
    const { threshold, logger } = this.deps;
    const changes = await this.deps.status.settleLowCredits(threshold, this.deps.now());
    this.failures.recovered();
    for (const c of changes) {
      if (c.low) logger.warn({ client: c.client, available: c.available, lowThreshold: threshold }, `client ${c.client} has ${c.available} credits available, below credits.lowThreshold ${threshold}`);
      else logger.info({ client: c.client, available: c.available, lowThreshold: threshold }, `client ${c.client} has ${c.available} credits available, no longer below credits.lowThreshold ${threshold}`);
    }
  }
}
