/**
 * SPEC.md "Legacy v2: GET {legacy_base_url}/api/v2/senderlist". The legacy API has its own error
 * shape: { success: false, message, errors: [...] }.
 */
import { Router } from '@koa/router';
import type { Context } from 'koa';
import type { CampaignService } from '../campaigns/index.js';
import type { ApiAuthenticator } from './auth-port.js';
import { NOT_ADMINISTRATOR_DETAIL } from './http-errors.js';
import { StoreOutageLog } from './store-outage.js';

/** Why a bearer token was refused, in words for the legacy errors array. */
const REFUSAL_TEXT: Readonly<Record<string, string>> = {
  missing: 'Authorization header with a Bearer token is required',
  malformed: 'The Authorization header is not a well-formed Bearer token',
  invalid: 'The access token is invalid',
  expired: 'The access token has expired',
  revoked: 'The access token has been revoked',
};

export interface LegacyRoutesDeps {
  auth: ApiAuthenticator;
  campaigns: CampaignService;
}

export function legacyRouter(deps: LegacyRoutesDeps): Router {
  const router = new Router();
  router.get('/api/v2/senderlist', async (ctx) => {
    const result = await deps.auth.authenticate(ctx.get('Authorization') || undefined, 'legacy');
    if (!result.ok) {
      sendLegacyError(ctx, 401, 'Unauthorized', REFUSAL_TEXT[result.reason] ?? 'The access token is invalid');
      return;
    }
    StoreOutageLog.markReached(ctx);
    // Not fixed by the spec: a deactivated user or account, or a non-administrator, gets 403 in the
    // legacy shape, the same rule as the current API.
    if (!deps.auth.isRecognizedAdministrator(result.identity)) {
      sendLegacyError(ctx, 403, 'Forbidden', NOT_ADMINISTRATOR_DETAIL);
      return;
    }
    const senders = await deps.campaigns.senders(result.identity);
    ctx.body = senders.map((s) => ({ name: s.name, type: s.type }));
  });
  return router;
}

function sendLegacyError(ctx: Context, status: number, message: string, error: string): void {
  ctx.status = status;
  if (status === 401) ctx.set('WWW-Authenticate', 'Bearer');
  ctx.body = { success: false, message, errors: [error] };
}
