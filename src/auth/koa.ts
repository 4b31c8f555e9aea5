/**
 * The token endpoints on Koa: POST /auth/token (client_id messaging-api) and POST
 * /legacy/auth/token (the legacy client id). Bodies are form-encoded only (RFC 6749 §4.3.2);
 * answers are JSON with Cache-Control: no-store. Errors never escape as a bare 500: an unexpected
 * failure is logged and answered with the OAuth error `server_error`.
 */
import { Router } from '@koa/router';
import type { Context } from 'koa';
import { silentLogger, type Logger } from '../log.js';
import type { AuthService } from './auth-service.js';
import { readFormBody } from './form-body.js';
import { STORE_RETRY_AFTER_SECONDS, type TokenEndpointKind } from './token-endpoint.js';
import { isStoreWriteRefusal } from '../store/write-refusal.js';

export const TOKEN_PATHS: Record<TokenEndpointKind, string> = {
  current: '/auth/token',
  legacy: '/legacy/auth/token',
};

export function authRouter(auth: AuthService, options: { logger?: Logger } = {}): Router {
  const logger = (options.logger ?? silentLogger()).child({ module: 'auth-http' });
  const router = new Router();
  for (const kind of ['current', 'legacy'] as const) {
    router.post(TOKEN_PATHS[kind], async (ctx) => {
      await answerTokenRequest(ctx, auth, kind, logger);
    });
  }
  return router;
}

async function answerTokenRequest(ctx: Context, auth: AuthService, kind: TokenEndpointKind, logger: Logger): Promise<void> {
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
  } catch (err) {
    logger.error({ err, endpoint: TOKEN_PATHS[kind] }, 'token request failed');
    if (isStoreWriteRefusal(err)) {
      // Even outside the grants (a read that hit a locked database): retry later, never 500.
      ctx.status = 503;
      ctx.set('Retry-After', String(STORE_RETRY_AFTER_SECONDS));
      ctx.body = { error: 'temporarily_unavailable', error_description: 'The token could not be issued now; retry later' };
      return;
    }
    ctx.status = 500;
    ctx.body = { error: 'server_error', error_description: 'The token could not be issued' };
  }
}
