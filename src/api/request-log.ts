/**
 * One log line per request: method, path (no query string, which might carry a secret), status and
 * duration. Headers are never logged, so Authorization cannot leak.
 */
import { performance } from 'node:perf_hooks';
import type { Middleware } from 'koa';
import type { Logger } from '../log.js';

export function requestLog(logger: Logger): Middleware {
  return async (ctx, next) => {
    const startedMs = performance.now();
    try {
      await next();
    } finally {
      const durationMs = Math.round((performance.now() - startedMs) * 10) / 10;
      logger.info({ method: ctx.method, path: ctx.path, status: ctx.status, durationMs }, 'request');
    }
  };
}
