/**
 * Server-rendered pages of the operator's web UI (docs/ui.md). Templates are Eta files under
 * server/ui/views: `<%= %>` escapes (the default; use it for everything that came from a
 * source, a user or a log), `<%~ %>` inserts raw HTML and is only for markup we built ourselves.
 * Every page renders through views/layout.eta (nav, theme, htmx with its SSE extension, CSRF
 * meta tag for htmx requests).
 */
import { Eta } from 'eta';
import { fileURLToPath } from 'node:url';
import type { Context } from 'koa';

const VIEWS = fileURLToPath(new URL('./views', import.meta.url));

/** One Eta for the process; templates are compiled once and cached. */
export const eta = new Eta({ views: VIEWS, autoEscape: true, cache: true, defaultExtension: '.eta' });

/** Who is looking at a page (null: signed out). */
export interface UiUser {
  username: string;
  csrfToken: string;
  mustChangeCredentials: boolean;
}

/** A one-line message shown above a page's content (after a redirect, or beside a form's error). */
export interface Flash {
  kind: 'info' | 'success' | 'error';
  text: string;
}

/** What layout.eta reads besides a page's own data. */
export interface PageFrame {
  /** The <title> and <h1>. */
  title: string;
  /** The nav entry to mark current: 'libraries' | 'add' | 'settings' | 'setup' | 'login'. */
  nav?: string;
  user: UiUser | null;
  flash?: Flash | null;
  /** Shown on every page while a trial or an expiring licence is installed. */
  banner?: string | null;
}

/** Renders `view` (a path under views/, no extension) with the frame and data; sets the type. */
export function renderPage(ctx: Context, view: string, frame: PageFrame, data: Record<string, unknown> = {}, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = eta.render(view, { ...data, frame });
}

/** Renders a fragment (no layout) for an htmx request. */
export function renderFragment(ctx: Context, view: string, data: Record<string, unknown> = {}, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = eta.render(view, data);
}

/** True for a request htmx made (it sends HX-Request: true). */
export function isHtmx(ctx: Context): boolean {
  return ctx.get('hx-request') === 'true';
}

/**
 * Sends the browser elsewhere after a form post: 303 for a plain form, HX-Redirect for htmx
 * (which follows the header instead of swapping a body).
 */
export function redirect(ctx: Context, to: string): void {
  if (isHtmx(ctx)) {
    ctx.status = 204;
    ctx.set('HX-Redirect', to);
    return;
  }
  ctx.status = 303;
  ctx.redirect(to);
  ctx.status = 303;
}
