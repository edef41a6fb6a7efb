import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { ApiService } from '../api/service.ts';
import { principalOf } from '../public-api.ts';
import { readJsonBody } from '../body.ts';
import { requireAdmin } from '../api/auth.ts';
import type { Access } from '../access.ts';

/** GET and PATCH /api/v2/policies */
export function policyRoutes(service: ApiService, access: Access): Router {
  const r = newRouter();
  r.get('/api/v2/policies', async (ctx) => {
    ctx.body = await service.getPolicyFor(principalOf(ctx));
  });
  r.patch('/api/v2/policies', async (ctx) => {
    const principal = principalOf(ctx);
    // Authorisation first: an anonymous or member caller gets 401/403 whatever the body holds.
    requireAdmin(principal, 'Changing the policy');
    access.requireLicence('Changing the policy');
    ctx.body = await service.patchPolicyFor(principal, await readJsonBody(ctx));
  });
  return r;
}
