import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { ApiService } from '../api/service.ts';
import { requireKey } from '../api/auth.ts';
import { principalOf } from '../public-api.ts';
import { readJsonBody } from '../body.ts';
import type { Access } from '../access.ts';

/** POST /api/v1/refresh */
export function refreshRoutes(service: ApiService, access: Access): Router {
  const r = newRouter();
  r.post('/api/v1/refresh', async (ctx) => {
    const principal = principalOf(ctx);
    requireKey(principal, 'Refreshing a library');
    access.requireLicence('Refreshing a library');
    const { message, libraryName, jobId } = await service.refreshFor(principal, await readJsonBody(ctx));
    ctx.body = { message, libraryName, jobId };
  });
  return r;
}
