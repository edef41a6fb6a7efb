import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { Access } from '../access.ts';
import { buildSupportBundle, type SupportBundleOptions } from '../support-bundle.ts';

/**
 * GET /api/support-bundle: the support zip (server/support-bundle.ts), for admins, or for anyone
 * when the operator turned the anonymous `supportBundle` permission On.
 */
export function supportBundleRoutes(kernel: Kernel, access: Access, options: SupportBundleOptions): Router {
  const r = newRouter();
  r.get('/api/support-bundle', async (ctx) => {
    await access.requirePermission(ctx, 'supportBundle', 'Downloading the support bundle');
    const zip = await buildSupportBundle(kernel, options);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Content-Disposition', `attachment; filename="refdesk-support-${stamp}.zip"`);
    ctx.type = 'application/zip';
    ctx.body = zip;
  });
  return r;
}
