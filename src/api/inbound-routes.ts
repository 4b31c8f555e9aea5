/**
 * GET /v1/inbound: the authenticated account's inbound messages in the order
 * they were stored (newest last), `{"messages":[{id, from, to, text, receivedAt, incomplete}], "next": cursor|null}`.
 * Authentication and 401/403 exactly as the campaign endpoints; a bad query is a 400 Validation
 * Error naming the field. `next` is null when this page holds the last message.
 */
import { Router } from '@koa/router';
import { encodeCursor, parseInboundQuery } from '../inbound/inbound-query.js';
import type { InboundStore } from '../store/sqlite/inbound-store.js';
import type { Async } from '../store/ports.js';
import type { ApiAuthenticator } from './auth-port.js';
import { administratorOrRefuse } from './campaign-routes.js';
import { sendProblem, VALIDATION_TITLE } from './http-errors.js';

export interface InboundRoutesDeps {
  auth: ApiAuthenticator;
  inbound: Async<InboundStore>;
}

export interface InboundMessageResource {
  id: string;
  from: string;
  to: string;
  text: string;
  receivedAt: string;
  incomplete: boolean;
}

export function inboundRouter(deps: InboundRoutesDeps): Router {
  const router = new Router();

  router.get('/v1/inbound', async (ctx) => {
    const identity = await administratorOrRefuse(ctx, deps.auth);
    if (identity === undefined) return;
    const query = parseInboundQuery(ctx.query);
    if (!query.ok) {
      sendProblem(ctx, { status: 400, title: VALIDATION_TITLE, detail: query.detail });
      return;
    }
    // One row more than the page tells whether another page follows.
    const rows = await deps.inbound.listForClient(identity.clientId, { sinceMs: query.sinceMs, afterId: query.afterId, maxRows: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    const messages: InboundMessageResource[] = page.map((row) => ({
      id: row.publicId,
      from: row.sender,
      to: row.recipient,
      text: row.text,
      receivedAt: new Date(row.receivedAtMs).toISOString(),
      incomplete: row.incomplete,
    }));
    ctx.body = { messages, next: rows.length > query.limit && last !== undefined ? encodeCursor(last.id) : null };
  });

  return router;
}
