/**
 * Times every API request for smsgate_http_request_duration_seconds. The route label is the
 * router's pattern (`/v1/campaign/:id`), never the raw path: campaign ids in the path would make a
 * new time series per campaign. A request no router matched is labelled `unmatched`.
 */
import type { Middleware } from 'koa';
import type { GatewayObserver } from '../gateway-observer.js';
import { afterRequest } from './after-request.js';

export const UNMATCHED_ROUTE = 'unmatched';

export function requestMetrics(observer: GatewayObserver): Middleware {
  return afterRequest((ctx, durationMs) => {
    // @koa/router sets _matchedRoute to the matched layer's path.
    const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
    const route = typeof matched === 'string' ? matched : UNMATCHED_ROUTE;
    observer.httpRequest(route, ctx.method, ctx.status, durationMs / 1_000);
  });
}
