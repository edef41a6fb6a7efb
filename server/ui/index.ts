/**
 * The operator's web UI (issue 20, docs/ui.md): server-rendered pages on the same Koa server and
 * port as the API, a face on the HTTP API that adds no behaviour of its own. Each page module
 * under pages/ registers its routes on the UI router; this file wires the shared parts: security
 * headers on every UI path, the static assets, `/` (to the setup wizard until setup is done,
 * else to the libraries).
 */
import type Router from '@koa/router';
import { newRouter } from '../routes/router.ts';
import { registerAssets } from './assets.ts';
import { uiSecurityHeaders } from './security.ts';
import { guardPage, setupDone, uiUser, type UiDeps } from './page-access.ts';
import { redirect } from './render.ts';
import { registerLoginPages } from './pages/login.ts';
import { registerSetupPages } from './pages/setup.ts';
import { registerLibrariesPages } from './pages/libraries.ts';
import { registerLibraryPages } from './pages/library.ts';
import { registerAddPages } from './pages/add.ts';
import { registerSettingsPages } from './pages/settings.ts';

export type { UiDeps } from './page-access.ts';

/** The UI paths (the security headers apply to these and everything under them). */
export const UI_PREFIXES = ['/setup', '/login', '/logout', '/libraries', '/add', '/settings', '/ui/'];

export function isUiPath(path: string): boolean {
  return path === '/' || UI_PREFIXES.some((p) => path === p || path.startsWith(p.endsWith('/') ? p : `${p}/`));
}

export function uiRoutes(deps: UiDeps): Router {
  const r = newRouter();
  r.use(async (ctx, next) => (isUiPath(ctx.path) ? uiSecurityHeaders(ctx, next) : next()));
  registerAssets(r);
  r.get('/', async (ctx) => {
    if (!(await setupDone(deps))) {
      // First launch: the wizard (it sends a signed-out visitor to /login first).
      redirect(ctx, (await uiUser(ctx, deps)) ? '/setup' : '/login?next=%2Fsetup');
      return;
    }
    if ((await guardPage(ctx, deps)) === undefined) return;
    redirect(ctx, '/libraries');
  });
  registerLoginPages(r, deps);
  registerSetupPages(r, deps);
  registerLibrariesPages(r, deps);
  registerLibraryPages(r, deps);
  registerAddPages(r, deps);
  registerSettingsPages(r, deps);
  return r;
}
