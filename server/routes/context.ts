import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { ApiService } from '../api/service.ts';
import { principalOf } from '../public-api.ts';

/** GET /api/v2/context */
export function contextRoutes(service: ApiService): Router {
  const r = newRouter();
  r.get('/api/v2/context', async (ctx) => {
    // The answer's bytes (made by the search worker when it assembled the answer): the same
    // bytes and headers as the text, or the object Koa would serialize, sent without a copy.
    const result = await service.getContextBytesFor(principalOf(ctx), ctx.query);
    ctx.type = result.type === 'json' ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8';
    ctx.body = result.bytes;
  });
  return r;
}
