import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { ApiService } from '../api/service.ts';
import { principalOf } from '../public-api.ts';

/** GET /api/v2/context */
export function contextRoutes(service: ApiService): Router {
  const r = newRouter();
  r.get('/api/v2/context', async (ctx) => {
    const result = await service.getContextFor(principalOf(ctx), ctx.query);
    if (result.type === 'json') {
      ctx.body = result.body;
    } else {
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = result.text;
    }
  });
  return r;
}
