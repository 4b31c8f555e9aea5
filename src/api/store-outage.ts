/**
 * How the API reports a database that cannot serve (stopped, unreachable, disk full, busy past the
 * timeout): every such request is answered 503 with Retry-After, and the outage is logged as one
 * outage, not per request. FailureLog (src/common/failure-log.ts) does the counting: a first line when
 * it starts, then at most one line per 30 s saying how many requests were refused meanwhile, and
 * one line when a request reaches the store again. The lines carry the failure's code and message,
 * never its stack: the stack of a refused connection says nothing an operator can use, and before
 * this an outage wrote one per request.
 */
import type { Context } from 'koa';
import { FAILURE_LOG_INTERVAL_MS, FailureLog } from '../common/failure-log.js';
import type { Logger } from '../common/log.js';

/** The ctx.state key a route sets once the store answered it (an identity was read). */
const STORE_REACHED = 'storeReached';

/** `reason`, not `message`: pino's error serializer would take an object with a message for an Error and add a stack. */
export interface StoreFailureSummary {
  code: string | undefined;
  reason: string;
}

export class StoreOutageLog {
  private readonly log: FailureLog;

  constructor(logger: Logger, intervalMs: number = FAILURE_LOG_INTERVAL_MS, now: () => number = Date.now) {
    this.log = new FailureLog(logger, 'answering API requests from the database (answered 503 with Retry-After)', intervalMs, now);
  }

  /** A request refused because the store cannot serve now. */
  failed(err: unknown, context: Record<string, unknown> = {}): void {
    this.log.failed(summarize(err), context);
  }

  /** A request the store served: ends an outage, if one was going on. */
  recovered(): void {
    this.log.recovered();
  }

  /** Marks the request as one the store answered (for recovered()). */
  static markReached(ctx: Pick<Context, 'state'>): void {
    (ctx.state as Record<string, unknown>)[STORE_REACHED] = true;
  }

  reachedStore(ctx: Pick<Context, 'state'>): boolean {
    return (ctx.state as Record<string, unknown>)[STORE_REACHED] === true;
  }
}

/** The store failure's own code and message (the innermost of a cause chain), for a line without a stack. */
export function summarize(err: unknown): StoreFailureSummary {
  let current: unknown = err;
  let summary: StoreFailureSummary = { code: undefined, reason: String(err) };
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    const message = (current as { message?: unknown }).message;
    summary = { code: typeof code === 'string' ? code : undefined, reason: typeof message === 'string' ? message : String(current) };
    current = (current as { cause?: unknown }).cause;
  }
  return summary;
}
