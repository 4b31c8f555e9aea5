/**
 * What the webhook sender logs about one failing endpoint (client id + URL), summarised rather
 * than one line per event: a dead endpoint used to write 2,002 identical warnings for 2,000 events,
 * each saying CIRCUIT_OPEN, the real cause (ECONNREFUSED) on one line only, and they filled the
 * status page's recent errors (docs/behaviour/metrics-and-logs.md).
 *
 * - Breaker opened: one warn line at once, with the failure that opened it (`cause`: ECONNREFUSED,
 *   TIMEOUT, HTTP_503...), the client id and the URL's host (never the path, query or
 *   user:password, which may carry credentials).
 * - While open: events failed fast (held for a later retry) and dead letters are counted, and told
 *   in at most one info line per endpoint per intervalMs (`eventsHeld`, `deadLetters` since the
 *   last line); a trial that fails again is counted too, its cause kept.
 * - Breaker closed (the trial answered): one warn line, with the totals of the outage; warn so
 *   that the status page's recent errors show the end beside the start.
 * - A redrive probe failing while the breaker is open is counted (`probesFailed`), not logged.
 * - Dead letters outside an outage (a 400 answered for every event): the first at once, with its
 *   event, then at most one line per endpoint per intervalMs counting the rest.
 *
 * Every summary is the shared FailureLog (src/common/failure-log.ts); flush() is called from the
 * sender's passes so that counts are told even when nothing more happens.
 */
import { FAILURE_LOG_INTERVAL_MS, FailureLog } from '../common/failure-log.js';
import type { Logger } from '../common/log.js';

export interface EndpointRef {
  clientId: number;
  url: string;
}

/** Endpoints whose dead-letter log is kept; past this the table starts again (a client per endpoint, so rarely reached). */
const DEAD_LETTER_LOGS_LIMIT = 1024;

export class EndpointLogs {
  /** Endpoints whose breaker is open (or half-open), by breaker key. */
  private readonly outages = new Map<string, FailureLog>();
  private readonly deadLetterLogs = new Map<string, FailureLog>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly intervalMs = FAILURE_LOG_INTERVAL_MS,
  ) {}

  /** The endpoint's breaker opened (first time, or again after a failed trial) because of `cause`. */
  breakerOpened(key: string, endpoint: EndpointRef, cause: string, openMs: number): void {
    let outage = this.outages.get(key);
    if (outage === undefined) {
      outage = new FailureLog(this.logger, 'webhook endpoint', this.intervalMs, this.now, {
        level: 'warn',
        summaryLevel: 'info',
        recoveredLevel: 'warn',
        fields: endpointFields(endpoint),
        messages: {
          failed: 'webhook circuit breaker opened: endpoint failing, its events are held and retried',
          stillFailing: 'webhook circuit breaker still open: events held',
          recovered: 'webhook circuit breaker closed: endpoint answers again',
        },
      });
      this.outages.set(key, outage);
    }
    outage.failed(cause, { cause, openMs });
  }

  /** An attempt failed fast because the endpoint's breaker is open: the event is held for its next retry. */
  held(key: string): void {
    this.outages.get(key)?.count('eventsHeld');
  }

  /** The endpoint's breaker closed: its trial answered. */
  breakerClosed(key: string): void {
    const outage = this.outages.get(key);
    if (outage === undefined) return;
    this.outages.delete(key);
    outage.recovered();
  }

  /** An event became a dead letter: counted into its endpoint's outage if one is going on, else logged (summarised). */
  deadLetter(key: string | null, endpoint: EndpointRef, fields: Record<string, unknown>): void {
    const outage = key === null ? undefined : this.outages.get(key);
    if (outage !== undefined) {
      outage.count('deadLetters');
      return;
    }
    const logKey = key ?? `${endpoint.clientId}`;
    let log = this.deadLetterLogs.get(logKey);
    if (log === undefined) {
      if (this.deadLetterLogs.size >= DEAD_LETTER_LOGS_LIMIT) this.deadLetterLogs.clear();
      log = new FailureLog(this.logger, 'webhook dead letters', this.intervalMs, this.now, {
        level: 'warn',
        fields: endpointFields(endpoint),
        messages: {
          failed: 'webhook dead letter',
          stillFailing: 'webhook dead letters (one line per endpoint per interval)',
          recovered: 'webhook dead letters stopped',
        },
      });
      this.deadLetterLogs.set(logKey, log);
    }
    log.failed(fields['lastError'], fields);
  }

  /**
   * A redrive probe (a dead letter re-sent alone) failed: counted into the endpoint's outage if one
   * is going on (the breaker opened again), else logged at info: one per breaker window at most.
   */
  probeFailed(key: string | null, fields: Record<string, unknown>): void {
    const outage = key === null ? undefined : this.outages.get(key);
    if (outage !== undefined) outage.count('probesFailed');
    else this.logger.info(fields, 'webhook redrive probe failed; the event stays a dead letter');
  }

  /** Writes the summaries whose interval is over (called from the sender's passes). */
  flush(): void {
    for (const outage of this.outages.values()) outage.flush();
    for (const log of this.deadLetterLogs.values()) log.flush();
  }
}

/** The client id and the URL's host[:port]: never its path, query or credentials, which may hold secrets. */
export function endpointFields(endpoint: EndpointRef): { clientId: number; host: string } {
  let host: string;
  if (endpoint.url === '') return { clientId: endpoint.clientId, host: '(no URL)' };
  try {
    host = new URL(endpoint.url).host;
  } catch {
    host = '(invalid URL)';
  }
  return { clientId: endpoint.clientId, host };
}
