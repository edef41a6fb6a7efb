import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { ApiService } from '../api/service.ts';
import { requireKey } from '../api/auth.ts';
import { principalOf } from '../public-api.ts';
import { readJsonBody } from '../body.ts';
import type { Access } from '../access.ts';
import { getAnonymousPermissions } from '../../core/settings.ts';

/**
 * POST /api/v1/refresh: any API key (member keys too, as Context7's contract says), an admin
 * session, or anyone while the operator's anonymous `refresh` permission is On (read per request,
 * so a settings change applies at once). Refused with 403 license_expired past the licence's expiry.
 */
export function refreshRoutes(service: ApiService, access: Access): Router {
  const r = newRouter();
  r.post('/api/v1/refresh', async (ctx) => {
    const caller = await access.caller(ctx);
    if (caller.kind === 'session') await access.requireAdmin(ctx, 'Refreshing a library');
    else if (caller.kind === 'anonymous' && !(await getAnonymousPermissions(service.kernel.store)).refresh) requireKey(principalOf(ctx), 'Refreshing a library');
    access.requireLicence('Refreshing a library');
    const { message, libraryName, jobId } = await service.refreshFor(caller, await readJsonBody(ctx));
    ctx.body = { message, libraryName, jobId };
  });
  return r;
}
