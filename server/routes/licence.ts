import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { Access, LicenceView } from '../access.ts';
import { InstalledLicence } from '../licence.ts';

/**
 * GET /api/license: the licence's licensee, plan, trial flag, dates, state
 * (`valid|expiring|expired`), days left and warning; never the key. Public, without the
 * licensee's email (and issuer id), which admins also get.
 */
export function licenceRoutes(access: Access, licence: LicenceView | undefined): Router {
  const r = newRouter();
  r.get('/api/license', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    if (!(licence instanceof InstalledLicence)) {
      ctx.body = { state: 'none', message: 'This server was started without a licence (tests only).' };
      return;
    }
    const caller = await access.caller(ctx);
    ctx.body = licence.summary(access.isAdmin(caller));
  });
  return r;
}
