/**
 * Wraps every route: a coded GatewayError becomes its mapped response (http-errors.ts), an empty
 * 404/405/501 from routing becomes Problem Details, and anything unexpected is logged and answered
 * 500 without internals. No input is meant to reach the 500 path; it exists so a bug never hangs
 * or crashes the server.
 */
import type { Middleware } from 'koa';
import { isGatewayError } from '../errors.js';
import type { Logger } from '../log.js';
import { isStoreWriteRefusal } from '../store/write-refusal.js';
import { httpProblemFor, problemForStatus, RETRY_AFTER_SECONDS, sendProblem } from './http-errors.js';

/** Statuses that routing leaves without a body and that get a Problem Details body here. */
const ROUTING_STATUSES: ReadonlySet<number> = new Set([404, 405, 501]);

export function errorBoundary(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const mapped = isGatewayError(err) ? httpProblemFor(err.code) : undefined;
      if (isGatewayError(err) && mapped?.mapped === true) {
        if (mapped.status === 503) ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
        sendProblem(ctx, { title: mapped.title, status: mapped.status, detail: err.message });
        return;
      }
      if (isStoreWriteRefusal(err)) {
        // The store refused a write for a reason outside the request (disk full, busy, the database
        // file deleted under the gateway): not the client's fault and not a bug, so 503, retry later.
        logger.warn({ err, method: ctx.method, path: ctx.path }, 'the store refused a write');
        ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
        sendProblem(ctx, problemForStatus(503, 'The store refused a write for this request; retry later.'));
        return;
      }
      logger.error({ err, method: ctx.method, path: ctx.path }, 'unexpected error while handling a request');
      sendProblem(ctx, problemForStatus(500, 'An unexpected error occurred.'));
      return;
    }
    if (ctx.body == null && ROUTING_STATUSES.has(ctx.status)) {
      const detail = ctx.status === 404 ? `no resource at ${ctx.path}` : `${ctx.method} is not allowed on ${ctx.path}`;
      sendProblem(ctx, problemForStatus(ctx.status, detail));
    }
  };
}
