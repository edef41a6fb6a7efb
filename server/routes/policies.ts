import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { ApiService } from '../api/service.ts';
import { principalOf } from '../public-api.ts';
import { readJsonBody } from '../body.ts';
import type { Access } from '../access.ts';
import { changePolicy } from '../operator-actions.ts';

/** GET and PATCH /api/v2/policies */
export function policyRoutes(service: ApiService, access: Access): Router {
  const r = newRouter();
  r.get('/api/v2/policies', async (ctx) => {
    ctx.body = await service.getPolicyFor(principalOf(ctx));
  });
  r.patch('/api/v2/policies', async (ctx) => {
    // Authorisation first: an anonymous or member caller gets 401/403 whatever the body holds.
    // An admin key or an admin session (server/access.ts).
    const caller = await access.requireAdmin(ctx, 'Changing the policy');
    access.requireLicence('Changing the policy');
    ctx.body = await changePolicy(service, caller, await readJsonBody(ctx));
  });
  return r;
}
