import Router from '@koa/router';
import type { ApiService } from '../api/service.ts';
import { principalOf } from '../public-api.ts';

export { libraryJson } from '../api/library-json.ts';

/** GET /api/v2/libs/search */
export function searchRoutes(service: ApiService): Router {
  const r = new Router();
  r.get('/api/v2/libs/search', async (ctx) => {
    ctx.body = await service.searchLibrariesFor(principalOf(ctx), ctx.query);
  });
  return r;
}
