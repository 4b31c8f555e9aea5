/** SPEC.md "GET {base_url}/health": 200 text/plain `Healthy`, no token. */
import { Router } from '@koa/router';

export function healthRouter(): Router {
  const router = new Router();
  router.get('/health', (ctx) => {
    ctx.type = 'text/plain';
    ctx.body = 'Healthy';
  });
  return router;
}
