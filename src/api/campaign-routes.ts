/**
 * SPEC.md "POST {base_url}/v1/campaign" and "GET {base_url}/v1/campaign/{id}". Authentication comes
 * first (401, then 403), as in the reference service where it runs before model binding; only then
 * is the body read or the id checked.
 */
import { createHash } from 'node:crypto';
import { Router } from '@koa/router';
import type { Context } from 'koa';
import { IDEMPOTENCY_KEY_PATTERN } from '../accounts/idempotency.js';
import type { CampaignService } from '../campaigns/index.js';
import { GatewayError } from '../common/errors.js';
import type { ApiAuthenticator, ApiIdentity } from './auth-port.js';
import { API_ERROR, NOT_ADMINISTRATOR_DETAIL, sendBearerChallenge } from './http-errors.js';
import type { BodyBudget } from './body-budget.js';
import { bodyError, discardBody, readJsonBody, type BodyRate } from './read-json-body.js';
import { StoreOutageLog } from './store-outage.js';

/** Property names match case-insensitively (campaign-request.ts), so the lazy member does too. */
const isRecipientInfo = (key: string): boolean => key.toLowerCase() === 'recipientinfo';

/** The request header of the IETF httpapi draft "The Idempotency-Key HTTP Header Field". */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** SPEC.md Create Campaign Response: always this message. */
export const CAMPAIGN_ACCEPTED_MESSAGE = 'Campaign received to be processed';

export interface CampaignRoutesDeps {
  auth: ApiAuthenticator;
  campaigns: CampaignService;
  maxBodyBytes: number;
  /** Bytes and bodies held across requests in flight, in all and per client; shared by every body-reading route. */
  bodyBudget: BodyBudget;
  /** The rate a body must arrive at (api.minBodyBytesPerSecond, api.bodyRateGraceMs). */
  minRate: BodyRate;
}

export function campaignRouter(deps: CampaignRoutesDeps): Router {
  const router = new Router();

  router.post('/v1/campaign', async (ctx) => {
    const identity = await administratorOrRefuse(ctx, deps.auth);
    if (identity === undefined) return;
    const key = idempotencyKeyOf(ctx);
    // The lease covers the body's whole life here: read, parsed, validated and stored. One client's
    // bodies are counted together whatever token or connection each came on.
    const lease = deps.bodyBudget.lease(String(identity.clientId));
    if (lease === undefined) {
      discardBody(ctx.req);
      throw new GatewayError(API_ERROR.clientBudgetExhausted,
        `this client already has ${deps.bodyBudget.limits.maxUploadsPerClient} request bodies in flight (api.maxUploadsPerClient); retry later`, { retryable: true });
    }
    let id: string;
    try {
      // The key's request hash is of the raw bytes (the draft's "request payload"), before parsing.
      let requestHash = '';
      const onBytes = key === undefined ? undefined : (bytes: Buffer): void => {
        requestHash = createHash('sha256').update(bytes).digest('hex');
      };
      // recipientInfo stays unparsed until validation reads it a run at a time.
      const body = await readJsonBody(ctx.req, {
        maxBodyBytes: deps.maxBodyBytes, lease, lazyArrays: isRecipientInfo, minRate: deps.minRate, ...(onBytes === undefined ? {} : { onBytes }),
      });
      ({ id } = key === undefined ? await deps.campaigns.accept(identity, body) : await deps.campaigns.acceptOnce(identity, body, { key, requestHash }));
    } catch (err) {
      throw bodyError(err);
    } finally {
      lease.release();
    }
    ctx.status = 202;
    ctx.body = { id, message: CAMPAIGN_ACCEPTED_MESSAGE };
  });

  router.get('/v1/campaign/:id', async (ctx) => {
    const identity = await administratorOrRefuse(ctx, deps.auth);
    if (identity === undefined) return;
    ctx.body = await deps.campaigns.summary(identity, ctx.params['id'] ?? '');
  });

  return router;
}

/**
 * The Idempotency-Key header's value, undefined when absent; a malformed one (not 1 to 255
 * printable ASCII characters, or sent twice) is refused before the body is read.
 */
function idempotencyKeyOf(ctx: Context): string | undefined {
  // headersDistinct: Node joins a repeated header into one value ("a, b"); the draft's key is one value.
  const values = ctx.req.headersDistinct[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
  if (values === undefined) return undefined;
  const value = values.length === 1 ? values[0] : undefined;
  if (value === undefined || !IDEMPOTENCY_KEY_PATTERN.test(value)) {
    discardBody(ctx.req);
    throw new GatewayError(API_ERROR.idempotencyKeyInvalid, `the ${IDEMPOTENCY_KEY_HEADER} header must be one value of 1 to 255 printable ASCII characters`);
  }
  return value;
}

/**
 * The identity when it is a recognized client administrator; otherwise answers 401 here (it needs
 * the Bearer challenge) or throws NOT_CLIENT_ADMINISTRATOR, which the error boundary maps to 403.
 */
export async function administratorOrRefuse(ctx: Context, auth: ApiAuthenticator): Promise<ApiIdentity | undefined> {
  const result = await auth.authenticate(ctx.get('Authorization') || undefined, 'current');
  if (!result.ok) {
    sendBearerChallenge(ctx);
    return undefined;
  }
  // An identity was read from the store: it answers (the end of an outage, if one was going on).
  StoreOutageLog.markReached(ctx);
  if (!auth.isRecognizedAdministrator(result.identity)) {
    throw new GatewayError(API_ERROR.notAdministrator, NOT_ADMINISTRATOR_DETAIL);
  }
  return result.identity;
}
