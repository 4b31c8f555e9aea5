/** GET /openapi.json (ARCHITECTURE.md mount points): the OpenAPI 3.1 document, no token. */
import { Router } from '@koa/router';
import { OPENAPI_DOCUMENT } from './openapi.js';

export function openApiRouter(): Router {
  const router = new Router();
  // Serialised once: the document is a constant.
  const body = JSON.stringify(OPENAPI_DOCUMENT);
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = body;
  });
  return router;
}
