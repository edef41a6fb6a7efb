import type Router from '@koa/router';
import { newRouter } from './router.ts';
import { openApiDocument } from '../openapi-document.ts';
import type { Kernel } from '../../core/kernel.ts';

/** GET /api/openapi.json: the OpenAPI 3.1 description of the public API, with the add routes of the loaded sources. */
export function openApiRoutes(kernel: Pick<Kernel, 'sources'>): Router {
  const r = newRouter();
  const doc = JSON.stringify(openApiDocument(kernel.sources.values()), null, 2);
  r.get('/api/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = doc;
  });
  return r;
}
