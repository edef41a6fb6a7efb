/** GET /api/audit: the audit log for admins, newest first (?limit 1..500, default 50; ?before=<id> pages). */
import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { Access } from '../access.ts';
import { listAuditPage } from '../operator-actions.ts';

export function auditRoutes(kernel: Kernel, access: Access): Router {
  const r = newRouter();
  r.get('/api/audit', async (ctx) => {
    await access.requireAdmin(ctx, 'Reading the audit log');
    const page = await listAuditPage(kernel, ctx.query as Record<string, unknown>);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = page;
  });
  return r;
}
