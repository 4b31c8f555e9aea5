/**
 * Runs `record` once a request has been answered (or has failed), with how long it took: the one
 * place the request log and the request-duration metric time a request.
 */
import { performance } from 'node:perf_hooks';
import type { Context, Middleware } from 'koa';

export function afterRequest(record: (ctx: Context, durationMs: number) => void): Middleware {
  return async (ctx, next) => {
    const startedMs = performance.now();
    try {
      await next();
    } finally {
      record(ctx, performance.now() - startedMs);
    }
  };
}
