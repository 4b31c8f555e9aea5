/**
 * Wraps every route: a coded GatewayError becomes its mapped response (http-errors.ts), a store
 * that cannot serve now (unreachable, full, busy: store/write-failures.ts) becomes 503 with
 * Retry-After, an empty 404/405/501 from routing becomes Problem Details, and anything unexpected
 * is logged and answered 500 without internals. No input is meant to reach the 500 path; it exists
 * so a bug never hangs or crashes the server.
 *
 * A database outage is logged through the API's StoreOutageLog, once when it starts, then at most
 * every 30 s, and once when a request reaches the store again: never a line (nor a stack) per request.
 */
import type { Middleware } from 'koa';
import type { Logger } from '../common/log.js';
import { isTransientStoreFailure } from '../store/write-failures.js';
import { API_ERROR, apiCodeOf, httpProblemFor, problemForStatus, RETRY_AFTER_SECONDS, sendProblem } from './http-errors.js';
import type { StoreOutageLog } from './store-outage.js';

/** Statuses that routing leaves without a body and that get a Problem Details body here. */
const ROUTING_STATUSES: ReadonlySet<number> = new Set([404, 405, 501]);

export function errorBoundary(logger: Logger, outage: StoreOutageLog): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const code = apiCodeOf(err);
      const mapped = code === undefined ? undefined : httpProblemFor(code);
      if (code !== undefined && mapped?.mapped === true) {
        // A 409: a request under the same Idempotency-Key is in flight; it answers soon.
        if (mapped.status === 503 || mapped.status === 429 || mapped.status === 409) ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
        // RFC 9110 §15.5.9: a 408 closes the connection (the rest of the body is not read).
        if (mapped.status === 408) ctx.set('Connection', 'close');
        if (code === API_ERROR.storeUnavailable) {
          outage.failed(err, { method: ctx.method, path: ctx.path });
          sendProblem(ctx, { title: mapped.title, status: mapped.status, detail: 'the database cannot serve this request now; retry later' });
          return;
        }
        // A GatewayError wrapping a store outage (a campaign not stored) is part of the outage too.
        if (isTransientStoreFailure(err)) outage.failed(err, { method: ctx.method, path: ctx.path });
        sendProblem(ctx, { title: mapped.title, status: mapped.status, detail: (err as Error).message });
        return;
      }
      logger.error({ err, method: ctx.method, path: ctx.path }, 'unexpected error while handling a request');
      sendProblem(ctx, problemForStatus(500, 'An unexpected error occurred.'));
      return;
    }
    if (ctx.status < 500 && outage.reachedStore(ctx)) outage.recovered();
    if (ctx.body == null && ROUTING_STATUSES.has(ctx.status)) {
      const detail = ctx.status === 404 ? `no resource at ${ctx.path}` : `${ctx.method} is not allowed on ${ctx.path}`;
      sendProblem(ctx, problemForStatus(ctx.status, detail));
    }
  };
}
