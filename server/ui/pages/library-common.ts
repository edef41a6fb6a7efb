/**
 * What the libraries pages (/libraries and /libraries/{libraryId}) share: page paths, the
 * session check of their forms, and how an API error becomes a page.
 */
import type { Context } from 'koa';
import { isRefdeskError } from '../../../core/errors.ts';
import type { LibraryState } from '../../../core/contracts.ts';
import { renderPage, type UiUser } from '../render.ts';
import type { UiDeps } from '../page-access.ts';

/** The page of a library (`/libraries/docs/python`, `/libraries/npm/@scope/pkg@1.0.0`). */
export function libraryPath(id: string): string {
  return `/libraries${id}`;
}

/** A library or job that is still being built (the list polls, the detail page streams). */
export function isBusy(state: LibraryState | string | null | undefined): boolean {
  return state === 'processing' || state === 'queued' || state === 'running';
}

/**
 * For a page's form post: 403 page when the session's CSRF checks fail (instead of looking
 * signed out). Returns false when it answered.
 */
export async function formSessionOk(ctx: Context, deps: UiDeps): Promise<boolean> {
  try {
    await deps.access.caller(ctx);
    return true;
  } catch (e) {
    if (!isRefdeskError(e) || e.code !== 'csrf_failed') throw e;
    renderPage(ctx, 'message', { title: 'Form expired', nav: 'libraries', user: null }, {
      message: 'This form could not be checked (it came from another page, or the session changed). Nothing was changed. Go back, reload the page and try again.',
      link: { href: '/libraries', text: 'All libraries' },
    }, 403);
    return false;
  }
}

/** An API error (RefdeskError) as a message page with its status; anything else is rethrown. */
export function renderApiError(ctx: Context, user: UiUser | null, e: unknown, title: string): void {
  if (!isRefdeskError(e)) throw e;
  const notFound = e.code === 'invalid_library_id' || e.code === 'library_not_found' || e.code === 'version_not_found';
  renderPage(ctx, 'message', { title, nav: 'libraries', user }, { message: e.message, link: { href: '/libraries', text: 'All libraries' } }, notFound ? 404 : e.status);
}
