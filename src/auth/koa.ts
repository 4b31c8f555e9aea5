/**
 * The token endpoints on Koa: POST /auth/token (client_id messaging-api) and POST
 * /legacy/auth/token (the legacy client id). Bodies are form-encoded only (RFC 6749 §4.3.2);
 * answers are JSON with Cache-Control: no-store. Errors never escape as a bare 500: an unexpected
 * failure is logged and answered with the OAuth error `server_error`.
 */
import { Router } from '@koa/router';
import type { Context } from 'koa';
import { silentLogger, type Logger } from '../common/log.js';
import type { AuthService } from './auth-service.js';
import { readFormBody } from './form-body.js';
import { STORE_RETRY_AFTER_SECONDS, type TokenEndpointKind } from './token-endpoint.js';
import { isTransientStoreFailure } from '../store/write-failures.js';

export const TOKEN_PATHS: Record<TokenEndpointKind, string> = {
  current: '/auth/token',
  legacy: '/legacy/auth/token',
};

/**
 * Where a store that cannot serve is reported: the API's StoreOutageLog (one line per outage, not
 * per request); without one, each refusal is a warning line without a stack.
 */
export interface StoreOutageReporter {
  failed(err: unknown, context?: Record<string, unknown>): void;
  recovered(): void;
}

export function authRouter(auth: AuthService, options: { logger?: Logger; outage?: StoreOutageReporter } = {}): Router {
  const logger = (options.logger ?? silentLogger()).child({ module: 'auth-http' });
  const outage: StoreOutageReporter = options.outage ?? {
    failed: (err, context) => logger.warn({ code: (err as { code?: unknown } | null)?.code, ...context }, 'token request refused: the store cannot serve now'),
    recovered: () => undefined,
  };
  const router = new Router();
  for (const kind of ['current', 'legacy'] as const) {
    router.post(TOKEN_PATHS[kind], async (ctx) => {
      await answerTokenRequest(ctx, auth, kind, logger, outage);
    });
  }
  return router;
}

async function answerTokenRequest(ctx: Context, auth: AuthService, kind: TokenEndpointKind, logger: Logger, outage: StoreOutageReporter): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
  try {
    const body = await readFormBody(ctx.req);
    if (!body.ok) {
      ctx.status = body.status;
      ctx.body = { error: 'invalid_request', error_description: body.description };
      return;
    }
    const remoteAddress = ctx.ip || ctx.req.socket.remoteAddress || 'unknown';
    const response = await auth.tokenEndpoint(body.form, remoteAddress, kind);
    ctx.status = response.status;
    for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
    ctx.body = response.body;
    // Tokens were issued, so the store answered: an outage, if any, is over.
    if (response.status === 200) outage.recovered();
  } catch (err) {
    if (isTransientStoreFailure(err)) {
      // A full, read-only, busy or unreachable database is not the client's fault and passes:
      // retry later, never 500.
      outage.failed(err, { endpoint: TOKEN_PATHS[kind] });
      ctx.status = 503;
      ctx.set('Retry-After', String(STORE_RETRY_AFTER_SECONDS));
      ctx.body = { error: 'temporarily_unavailable', error_description: 'The token could not be issued now; retry later' };
      return;
    }
    logger.error({ err, endpoint: TOKEN_PATHS[kind] }, 'token request failed');
    ctx.status = 500;
    ctx.body = { error: 'server_error', error_description: 'The token could not be issued' };
  }
}
