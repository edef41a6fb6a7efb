/**
 * /libraries: every library with its ID, title, source kind, versions, state, snippets, tokens
 * and last update, as GET /api/libraries lists them (the same function), filtered by text and
 * state with a plain GET form (htmx swaps the table in place). While any library is being built
 * the table polls its own fragment every few seconds and the status line announces the
 * libraries whose build ended. Signed-in admins only.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { isRefdeskError } from '../../../core/errors.ts';
import { LIBRARY_STATES, libraryFilterOf, listLibrariesFor, type LibraryFilter, type LibraryListEntry } from '../../api/library-views.ts';
import { guardPage, type UiDeps } from '../page-access.ts';
import { isHtmx, renderFragment, renderPage } from '../render.ts';
import { isBusy } from './library-common.ts';

/** How often the list polls while a library is being built. */
export const LIST_POLL_SECONDS = 3;
/** The most library IDs a poll carries to announce (the busy ones). */
const WATCH_MAX = 50;

/** The list's own URL for these filters (and the busy libraries to announce when they end). */
function listUrl(filter: LibraryFilter, watch: string[] = []): string {
  const q = new URLSearchParams();
  if (filter.q) q.set('q', filter.q);
  if (filter.state) q.set('state', filter.state);
  for (const id of watch.slice(0, WATCH_MAX)) q.append('watch', id);
  const s = q.toString();
  return s ? `/libraries?${s}` : '/libraries';
}

/** "X is now finalized" for each watched library that is no longer being built. */
function endedBuilds(ctx: Context, libraries: LibraryListEntry[]): string {
  const raw = ctx.query.watch;
  const watched = (Array.isArray(raw) ? raw : raw ? [raw] : []).slice(0, WATCH_MAX);
  const byId = new Map(libraries.map((l) => [l.id, l]));
  return watched
    .map((id) => byId.get(id))
    .filter((l): l is LibraryListEntry => Boolean(l) && !busy(l!))
    .map((l) => `${l.id} is now ${l.state}${l.lastJob?.state === 'failed' ? ' (its last job failed)' : ''}.`)
    .join(' ');
}

function busy(l: LibraryListEntry): boolean {
  return isBusy(l.state) || isBusy(l.lastJob?.state);
}

export function registerLibrariesPages(r: Router, deps: UiDeps): void {
  r.get('/libraries', async (ctx) => {
    const user = await guardPage(ctx, deps);
    if (!user) return;
    let filter: LibraryFilter = {};
    let filterError: string | null = null;
    try {
      filter = libraryFilterOf(ctx.query);
    } catch (e) {
      if (!isRefdeskError(e)) throw e;
      filterError = e.message;
    }
    const libraries = await listLibrariesFor(deps.kernel, deps.access, ctx, filter);
    const busyIds = libraries.filter(busy).map((l) => l.id);
    const data = {
      libraries,
      filter,
      filterError,
      states: LIBRARY_STATES,
      total: filter.q || filter.state ? (await deps.kernel.store.listLibraries()).length : libraries.length,
      pollUrl: busyIds.length ? listUrl(filter, busyIds) : null,
      pollSeconds: LIST_POLL_SECONDS,
      announce: endedBuilds(ctx, libraries),
      origin: ctx.origin,
    };
    ctx.vary('HX-Request');
    // htmx asks for the table (filter, poll); a history restore wants the whole page.
    if (isHtmx(ctx) && ctx.get('hx-history-restore-request') !== 'true') {
      renderFragment(ctx, 'libraries/table', { ...data, oob: true }, filterError ? 400 : 200);
      return;
    }
    // After a delete: its message, once the library is indeed gone.
    const asked = typeof ctx.query.deleted === 'string' ? ctx.query.deleted.slice(0, 600) : null;
    const deleted = asked && !(await deps.kernel.store.getLibrary(asked).catch(() => null)) ? asked : null;
    renderPage(
      ctx,
      'libraries/index',
      { title: 'Libraries', nav: 'libraries', user, flash: deleted ? { kind: 'success', text: `Deleted ${deleted} (every version, build, snippet and job).` } : null },
      data,
      filterError ? 400 : 200,
    );
  });
}
