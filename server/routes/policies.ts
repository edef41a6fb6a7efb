import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { ApiService } from '../api/service.ts';
import { principalOf } from '../public-api.ts';
import { readJsonBody } from '../body.ts';
import { requireAdmin } from '../api/auth.ts';
import type { Access } from '../access.ts';
import { audit } from '../audit.ts';

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
    const body = await readJsonBody(ctx);
    ctx.body = await service.patchPolicyFor(principal, body);
    if (principal.kind === 'key') {
      const fields = body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body).slice(0, 20) : [];
      await audit(service.kernel, { actor: `key:${principal.key.id}`, action: 'policy.change', target: null, outcome: 'success', client: principal.client, details: { fields } });
    }
  });
  return r;
}
