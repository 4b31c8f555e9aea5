/**
 * The admin listener's Koa app, separate from the API app and never on its port:
 * GET /metrics (Prometheus), GET /status (HTML), GET /status.json, GET /ready, and
 * POST /status/replay (the status page's replay button). A request whose Host header names
 * something the listener does not serve gets 421 first (host-check.ts: DNS rebinding). With
 * admin.token set, every request needs `Authorization: Bearer <token>`, compared in constant time.
 *
 * The replay POST changes state, so it is guarded against cross-site requests twice: a
 * per-process CSRF token carried in the form (constant-time comparison) and the browser's own
 * Sec-Fetch-Site / Origin headers, which must say same-origin when present.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import Koa from 'koa';
import { readFormBody } from '../auth/form-body.js';
import type { Logger } from '../common/log.js';
import type { StorePorts } from '../store/store-ports.js';
import type { GatewayMetrics } from './gateway-metrics.js';
import { misdirectedReason } from './host-check.js';
import { isLoopbackHost } from './admin-config.js';
import type { ReloadOutcome } from '../config/reload-outcome.js';
import { liveStatusFacts, type LiveSources } from './status-facts.js';
import { renderStatusPage } from './status-page.js';

export interface AdminAppDeps extends LiveSources {
  /** Finding a client and re-queueing its dead letters (the replay button). */
  replayPorts: ReplayPorts;
  metrics: GatewayMetrics;
  /** admin.token; undefined on loopback without one. */
  token?: string;
  /** Wakes the webhook sender after a replay re-queued rows. */
  wakeWebhooks(): void;
  /** The host names (normalised, no port) a request's Host header may name (host-check.ts servedHostNames). */
  servedHosts(): ReadonlySet<string>;
  logger: Logger;
  /** Re-reads the config file (POST /reload); undefined before the gateway attached its config. */
  reload?(): Promise<ReloadOutcome> | undefined;
  /** admin.token is set (then every request carried it): POST /reload is taken from any address. */
  tokenRequired?: boolean;
}

/** Equal-length digests, so neither the comparison nor its length check leaks the secret. */
export function constantTimeEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

function problem(ctx: Koa.Context, status: number, title: string, detail: string): void {
  ctx.status = status;
  ctx.type = 'application/problem+json';
  ctx.body = JSON.stringify({ type: 'about:blank', title, status, detail });
}

/** Sec-Fetch-Site and Origin, when the browser sent them, must both say "this very origin". */
export function crossSiteReason(headers: Record<string, string | string[] | undefined>, host: string | undefined): string | null {
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') return `Sec-Fetch-Site is ${site}`;
  const origin = headers['origin'];
  // https: the listener may sit behind a TLS proxy that keeps the Host header.
  if (typeof origin === 'string' && (host === undefined || (origin !== `http://${host}` && origin !== `https://${host}`))) return `Origin ${origin} is not this listener`;
  return null;
}

/**
 * One-shot notices shown after a replay's redirect. Kept here and named by a random id in the
 * URL, so a crafted link cannot make the page announce something that did not happen.
 */
class Notices {
  private readonly texts = new Map<string, string>();

  add(text: string): string {
    const id = randomBytes(9).toString('base64url');
    this.texts.set(id, text);
    // A few at most: a notice not shown soon (the redirect was not followed) is just dropped.
    for (const key of this.texts.keys()) {
      if (this.texts.size <= 16) break;
      this.texts.delete(key);
    }
    return id;
  }

  take(id: unknown): string | undefined {
    if (typeof id !== 'string') return undefined;
    const text = this.texts.get(id);
    this.texts.delete(id);
    return text;
  }
}

export function createAdminApp(deps: AdminAppDeps): Koa {
  const app = new Koa();
  app.silent = true;
  const csrfToken = randomBytes(32).toString('base64url');
  const notices = new Notices();
  const expectedAuthorization = deps.token === undefined ? undefined : `Bearer ${deps.token}`;

  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      // Never a stack trace to the client; the log gets the error (never the request headers).
      deps.logger.error({ err, path: ctx.path }, 'admin request failed');
      problem(ctx, 500, 'Internal Server Error', 'the admin listener could not answer; see the log');
    }
  });

  app.use(async (ctx, next) => {
    const misdirected = misdirectedReason(ctx.get('host') || undefined, deps.servedHosts);
    if (misdirected !== null) {
      // Plain text and nothing of the page: whatever asked under another name learns nothing.
      ctx.status = 421;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Cache-Control', 'no-store');
      ctx.body = `421 Misdirected Request: ${misdirected}\n`;
      return;
    }
    await next();
  });

  app.use(async (ctx, next) => {
    if (expectedAuthorization !== undefined && !constantTimeEqual(ctx.get('authorization'), expectedAuthorization)) {
      ctx.set('WWW-Authenticate', 'Bearer realm="smsgate-admin"');
      problem(ctx, 401, 'Unauthorized', 'this admin listener needs Authorization: Bearer <admin.token>');
      return;
    }
    await next();
  });

  app.use(async (ctx) => {
    // HEAD is GET without the body (Koa leaves the body out).
    const route = `${ctx.method === 'HEAD' ? 'GET' : ctx.method} ${ctx.path}`;
    switch (route) {
      case 'GET /metrics':
        ctx.type = deps.metrics.contentType;
        ctx.body = await deps.metrics.metrics();
        return;
      case 'GET /status.json':
        ctx.set('Cache-Control', 'no-store');
        ctx.body = await liveStatusFacts(deps);
        return;
      case 'GET /status': {
        const notice = notices.take(ctx.query['notice']);
        ctx.set('Cache-Control', 'no-store');
        // The page may not be framed elsewhere (clickjacking the replay button).
        ctx.set('X-Frame-Options', 'DENY');
        ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = renderStatusPage(await liveStatusFacts(deps), { csrfToken, ...(notice === undefined ? {} : { notice }) });
        return;
      }
      case 'GET /ready': {
        const result = await deps.readiness();
        ctx.status = result.ready ? 200 : 503;
        ctx.set('Cache-Control', 'no-store');
        ctx.body = result;
        return;
      }
      case 'POST /status/replay':
        await replay(ctx, deps, csrfToken, notices);
        return;
      case 'POST /reload':
        await reload(ctx, deps);
        return;
      default:
        if (['/metrics', '/status', '/status.json', '/ready', '/status/replay', '/reload'].includes(ctx.path)) {
          ctx.set('Allow', ctx.path === '/status/replay' || ctx.path === '/reload' ? 'POST' : 'GET, HEAD');
          problem(ctx, 405, 'Method Not Allowed', `${ctx.method} is not allowed on ${ctx.path}`);
          return;
        }
        problem(ctx, 404, 'Not Found', `no admin endpoint at ${ctx.path}`);
    }
  });
  return app;
}

async function replay(ctx: Koa.Context, deps: AdminAppDeps, csrfToken: string, notices: Notices): Promise<void> {
  const crossSite = crossSiteReason(ctx.headers, ctx.get('host') || undefined);
  if (crossSite !== null) {
    problem(ctx, 403, 'Forbidden', `cross-site request refused: ${crossSite}`);
    return;
  }
  const body = await readFormBody(ctx.req);
  if (!body.ok) {
    problem(ctx, body.status, body.status === 413 ? 'Payload Too Large' : 'Bad Request', body.description);
    return;
  }
  const csrf = body.form['csrf'];
  if (typeof csrf !== 'string' || !constantTimeEqual(csrf, csrfToken)) {
    problem(ctx, 403, 'Forbidden', 'csrf: missing or not this page\'s token (reload the status page)');
    return;
  }
  const clientName = body.form['client'];
  if (typeof clientName !== 'string' || clientName === '') {
    problem(ctx, 400, 'Bad Request', 'client: required, once');
    return;
  }
  const requeued = await replayDeadLetters(deps.replayPorts, clientName, deps.now());
  if (requeued === null) {
    problem(ctx, 404, 'Not Found', `client: no client named ${JSON.stringify(clientName)}`);
    return;
  }
  deps.logger.info({ client: clientName, requeued }, 'dead letters re-queued from the status page');
  if (requeued > 0) deps.wakeWebhooks();
  ctx.status = 303;
  ctx.redirect(`/status?notice=${notices.add(`Re-queued ${requeued} dead letter(s) of client ${clientName}.`)}`);
}

/**
 * POST /reload (`smsgate config reload`): the running serve re-reads its config file. Without
 * admin.token only a caller on this machine may ask (the listener is on loopback then, but a
 * proxy may forward to it), and never a browser page of another site (Sec-Fetch-Site / Origin).
 * 200 with what changed, or 422 with the error when the file does not validate (nothing changed).
 */
async function reload(ctx: Koa.Context, deps: AdminAppDeps): Promise<void> {
  const crossSite = crossSiteReason(ctx.headers, ctx.get('host') || undefined);
  if (crossSite !== null) {
    problem(ctx, 403, 'Forbidden', `cross-site request refused: ${crossSite}`);
    return;
  }
  const peer = ctx.req.socket.remoteAddress ?? '';
  if (deps.tokenRequired !== true && !isLoopbackHost(peer)) {
    problem(ctx, 403, 'Forbidden', 'POST /reload is taken only from this machine unless admin.token is set');
    return;
  }
  const outcome = await deps.reload?.();
  if (outcome === undefined) {
    problem(ctx, 503, 'Service Unavailable', 'the gateway is still starting: nothing to reload yet');
    return;
  }
  deps.logger.info({ reloaded: outcome.reloaded }, 'config reload asked through the admin listener');
  ctx.status = outcome.reloaded ? 200 : 422;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = outcome;
}

/**
 * What `smsgate webhook replay --client NAME` does (requeueDeadLetters): the client's dead letters
 * go back to pending, due now, same bytes. Null when there is no such client.
 */
export type ReplayPorts = { auth: Pick<StorePorts['auth'], 'clientByName'>; webhooks: Pick<StorePorts['webhooks'], 'requeueDeadLetters'> };

export async function replayDeadLetters(ports: ReplayPorts, clientName: string, nowMs: number): Promise<number | null> {
  const client = await ports.auth.clientByName(clientName);
  if (client === undefined) return null;
  return (await ports.webhooks.requeueDeadLetters({ clientId: client.id }, nowMs)).length;
}
