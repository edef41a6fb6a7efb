/** GET /api/audit: the audit log for admins, newest first (?limit 1..500, default 50; ?before=<id> pages). */
import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { Access } from '../access.ts';
import { optionalInt } from '../api/params.ts';
import { RefdeskError } from '../../core/errors.ts';

export function auditRoutes(kernel: Kernel, access: Access): Router {
  const r = newRouter();
  r.get('/api/audit', async (ctx) => {
    await access.requireAdmin(ctx, 'Reading the audit log');
    const q = ctx.query as Record<string, unknown>;
    const limit = optionalInt(q, 'limit') ?? 50;
    if (limit > 500) throw new RefdeskError('invalid_request', 'Parameter "limit" must be at most 500.');
    const before = optionalInt(q, 'before');
    const entries = await kernel.store.listAudit({ limit, ...(before !== undefined ? { before } : {}) });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { entries, nextBefore: entries.length === limit ? entries[entries.length - 1].id : null };
  });
  return r;
}
