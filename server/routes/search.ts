import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { ApiService } from '../api/service.ts';
import { principalOf } from '../public-api.ts';

export { libraryJson } from '../api/library-json.ts';

/** GET /api/v2/libs/search */
export function searchRoutes(service: ApiService): Router {
  const r = newRouter();
  r.get('/api/v2/libs/search', async (ctx) => {
    ctx.body = await service.searchLibrariesFor(principalOf(ctx), ctx.query, ctx.state.catalog);
  });
  return r;
}
