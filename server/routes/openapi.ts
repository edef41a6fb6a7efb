import type Router from '@koa/router';
import { newRouter } from './router.ts';
import { openApiDocument } from '../openapi-document.ts';

/** GET /api/openapi.json: the OpenAPI 3.1 description of the public API. */
export function openApiRoutes(): Router {
  const r = newRouter();
  const doc = JSON.stringify(openApiDocument(), null, 2);
  r.get('/api/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = doc;
  });
  return r;
}
