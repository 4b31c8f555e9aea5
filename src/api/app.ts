/**
 * The HTTP face of smsgate (SPEC.md "Endpoints"): health, the v1 campaign API, the token endpoints
 * (src/auth) and the legacy v2 sender list, on one Koa app. Middleware order: request log (sees the
 * final status), error boundary (codes -> statuses), then the routers with their 405 handling.
 */
import Koa from 'koa';
import type { Router } from '@koa/router';
import { authRouter, type AuthService } from '../auth/index.js';
import type { CampaignService } from '../campaigns/index.js';
import type { ApiConfig } from '../config/types.js';
import type { GatewayObserver } from '../gateway-observer.js';
import type { Logger } from '../common/log.js';
import type { StorePorts } from '../store/store-ports.js';
import { BodyBudget, bodyBudgetLimits } from './body-budget.js';
import { campaignRouter } from './campaign-routes.js';
import { errorBoundary } from './error-boundary.js';
import { healthRouter } from './health-route.js';
import { inboundRouter } from './inbound-routes.js';
import { legacyRouter } from './legacy-routes.js';
import { openApiRouter } from './openapi-route.js';
import { DEFAULT_BODY_RATE_GRACE_MS, DEFAULT_MIN_BODY_BYTES_PER_SECOND } from './read-json-body.js';
import { requestLog } from './request-log.js';
import { requestMetrics } from './request-metrics.js';
import { StoreOutageLog } from './store-outage.js';

export interface ApiDeps {
  /** The store ports the routes read directly (GET /v1/inbound); the rest go through auth and campaigns. */
  ports: Pick<StorePorts, 'inbound'>;
  auth: AuthService;
  campaigns: CampaignService;
  /** The config file's `api` section (src/config owns its shape; no composition-layer type here). */
  config: { api: ApiConfig };
  logger: Logger;
  /** Metrics hooks (src/admin); none by default. */
  observer?: GatewayObserver;
}

export function createApiApp(deps: ApiDeps): Koa {
  const app = new Koa();
  // Every error is answered by the boundary; Koa's own stderr printing would duplicate it.
  app.silent = true;
  const logger = deps.logger.child({ component: 'api' });
  if (deps.observer !== undefined) app.use(requestMetrics(deps.observer));
  app.use(requestLog(logger));
  // One outage log for every route, the token endpoints included: one line per outage, not per request.
  const storeOutage = new StoreOutageLog(logger);
  app.use(errorBoundary(logger, storeOutage));
  const bodyBudget = new BodyBudget(bodyBudgetLimits(deps.config.api));
  const minRate = {
    minBytesPerSecond: deps.config.api.minBodyBytesPerSecond ?? DEFAULT_MIN_BODY_BYTES_PER_SECOND,
    graceMs: deps.config.api.bodyRateGraceMs ?? DEFAULT_BODY_RATE_GRACE_MS,
  };
  const routers: Router[] = [
    healthRouter(),
    openApiRouter(),
    campaignRouter({ auth: deps.auth, campaigns: deps.campaigns, maxBodyBytes: deps.config.api.maxBodyBytes, bodyBudget, minRate }),
    legacyRouter({ auth: deps.auth, campaigns: deps.campaigns }),
    inboundRouter({ auth: deps.auth, inbound: deps.ports.inbound }),
    // POST /auth/token and POST /legacy/auth/token (SPEC.md token endpoints), owned by src/auth.
    authRouter(deps.auth, { logger, outage: storeOutage }),
  ];
  for (const router of routers) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
}
