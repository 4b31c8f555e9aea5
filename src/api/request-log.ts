/**
 * One log line per request: method, path (no query string, which might carry a secret), status and
 * duration. Headers are never logged, so Authorization cannot leak.
 */
import type { Middleware } from 'koa';
import type { Logger } from '../common/log.js';
import { afterRequest } from './after-request.js';

export function requestLog(logger: Logger): Middleware {
  return afterRequest((ctx, elapsedMs) => {
    const durationMs = Math.round(elapsedMs * 10) / 10;
    logger.info({ method: ctx.method, path: ctx.path, status: ctx.status, durationMs }, 'request');
  });
}
