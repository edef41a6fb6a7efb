/**
 * Library lifecycle for the UI and automation:
 *
 *   GET    /api/libraries[?q=&state=]          every library: state, versions, source, counts, last job
 *   GET    /api/libraries/{libraryId}          one library: its versions, recent jobs, its spec (no secrets)
 *   POST   /api/libraries/{libraryId}/refresh  a new build from its source (permission `refresh` + licence)
 *   DELETE /api/libraries/{libraryId}          every version, snippet, index file, job log and upload
 *                                              (a pinned ID: that version only; permission `delete`;
 *                                              never blocked by an expired licence)
 *
 * A library ID is its slash path (`/api/libraries/owner/repo`). Reading is public like search:
 * callers that are not admins see the libraries the access policy shows them (server/access/policy.ts),
 * admins see every library. The work is in server/api/library-views.ts, which the web UI's
 * pages call too.
 */
import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { Kernel } from '../../core/kernel.ts';
import { deleteLibrary, type ApiService } from '../api/service.ts';
import type { Access } from '../access.ts';
import { libraryDetailFor, libraryFilterOf, libraryIdParam as idParam, listLibrariesFor, refreshLibraryFor } from '../api/library-views.ts';

export function libraryRoutes(kernel: Kernel, service: ApiService, access: Access): Router {
  const r = newRouter();

  r.get('/api/libraries', async (ctx) => {
    const libraries = await listLibrariesFor(kernel, access, ctx, libraryFilterOf(ctx.query));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { libraries };
  });

  r.get('/api/libraries/*id', async (ctx) => {
    const detail = await libraryDetailFor(kernel, access, ctx, idParam(ctx));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = detail;
  });

  r.post('/api/libraries/*id', async (ctx, next) => {
    const path = idParam(ctx);
    if (!path.endsWith('/refresh') || path === '/refresh') return next();
    const answer = await refreshLibraryFor(kernel, service, access, ctx, path.slice(0, -'/refresh'.length));
    ctx.status = 202;
    ctx.body = answer;
  });

  r.delete('/api/libraries/*id', async (ctx) => {
    await access.requirePermission(ctx, 'delete', 'Deleting a library');
    ctx.body = await deleteLibrary(kernel, idParam(ctx));
  });

  return r;
}
