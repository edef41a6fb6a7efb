/**
 * Sign-in and sign-out pages (docs/ui.md#sign-in): GET/POST /login and GET/POST /logout, plain
 * urlencoded forms over the same AuthService the API's /api/auth routes use (same session cookie,
 * same lockout, same audit entries).
 *
 * - GET /login: the form (Username, Password, and the setup token while the factory credentials
 *   are in use and the visitor is not on the server's machine); a signed-in visitor goes on to
 *   `next` (or to /setup while the factory credentials must be changed).
 * - POST /login: AuthService.login, then 303 to a same-site `next` or `/`; a refusal is shown
 *   beside the form (wrong credentials 401, lockout 429 with Retry-After, setup token needed 403).
 * - GET /logout: sign out, or sign out everywhere (views/partials/signout.eta, which the settings
 *   page includes too). POST /logout (`_csrf`, `all=1` for every session): AuthService.logout,
 *   then 303 to /login saying so.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { RefdeskError } from '../../../core/errors.ts';
import { ApiError } from '../../api/api-error.ts';
import { SESSION_COOKIE, isLocalRequest } from '../../auth/sessions.ts';
import { credentialsChanged, safeNext, uiUser, type UiDeps } from '../page-access.ts';
import { redirect, renderPage, type Flash } from '../render.ts';
import { formCaller, formFields } from '../forms.ts';

interface LoginView {
  next: string;
  username: string;
  /** The factory credentials are still in use (no account yet): say how the first sign-in works. */
  firstLaunch: boolean;
  /** The factory credentials from another machine need the setup token. */
  askSetupToken: boolean;
  licenceExpiredOn: string | null;
  error: { text: string; field: 'username' | 'password' | 'setupToken' | null } | null;
}

async function loginView(ctx: Context, deps: UiDeps, next: string, username = ''): Promise<LoginView> {
  const firstLaunch = !(await credentialsChanged(deps));
  const expired = deps.licence?.expired() ? (deps.licence.expiresAt() ?? '').slice(0, 10) || 'an earlier date' : null;
  return { next, username, firstLaunch, askSetupToken: firstLaunch && !isLocalRequest(ctx), licenceExpiredOn: expired, error: null };
}

function signedOutFlash(q: Record<string, unknown>): Flash | null {
  if (q.signed_out === 'all') {
    const n = Number(q.ended);
    return { kind: 'success', text: `Signed out everywhere${Number.isInteger(n) && n > 0 ? `: ${n} session${n === 1 ? '' : 's'} ended` : ''}.` };
  }
  if (q.signed_out === '1') return { kind: 'success', text: 'Signed out.' };
  return null;
}

function renderLogin(ctx: Context, view: LoginView, flash: Flash | null, status = 200): void {
  renderPage(ctx, 'login', { title: 'Sign in', nav: 'login', user: null, flash }, { view }, status);
}

/** Where a signed-in session goes from /login: the wizard while it must change the credentials. */
function onwards(mustChangeCredentials: boolean, next: string): string {
  return mustChangeCredentials ? '/setup' : next;
}

export function registerLoginPages(r: Router, deps: UiDeps): void {
  r.get('/login', async (ctx) => {
    const next = safeNext(ctx.query.next, '/');
    const user = await uiUser(ctx, deps);
    if (user) {
      redirect(ctx, onwards(user.mustChangeCredentials, next));
      return;
    }
    renderLogin(ctx, await loginView(ctx, deps, next), signedOutFlash(ctx.query));
  });

  r.post('/login', async (ctx) => {
    const form = await formFields(ctx);
    const next = safeNext(form.next, '/');
    const view = await loginView(ctx, deps, next, (form.username ?? '').slice(0, 64));
    const refuse = (status: number, text: string, field: NonNullable<LoginView['error']>['field']) => {
      view.error = { text, field };
      renderLogin(ctx, view, null, status);
    };
    if (!form.username?.trim()) return refuse(400, 'Enter your user name.', 'username');
    if (!form.password) return refuse(400, 'Enter your password.', 'password');
    const body: Record<string, unknown> = { username: form.username, password: form.password };
    if (form.setupToken?.trim()) body.setupToken = form.setupToken.trim();
    try {
      const session = await deps.auth.login(ctx, body);
      redirect(ctx, onwards(session.mustChangeCredentials, next));
    } catch (e) {
      if (!(e instanceof RefdeskError)) throw e;
      if (e instanceof ApiError) for (const [h, v] of Object.entries(e.headers)) ctx.set(h, v);
      if (e.code === 'forbidden') {
        view.askSetupToken = true;
        return refuse(403, 'The factory credentials sign in only on the server\'s own machine, or with the setup token: enter the token the server printed at its first start (it is also in the file DATA_DIR/setup-token on the server).', 'setupToken');
      }
      const field = /setup token/i.test(e.message) ? 'setupToken' : e.code === 'unauthorized' ? 'password' : null;
      refuse(e.status, e.message, field);
    }
  });

  r.get('/logout', async (ctx) => {
    const user = await uiUser(ctx, deps);
    if (!user) {
      redirect(ctx, '/login');
      return;
    }
    renderPage(ctx, 'logout', { title: 'Sign out', user }, {});
  });

  r.post('/logout', async (ctx) => {
    const form = await formFields(ctx);
    const all = form.all === '1' || form.all === 'true';
    // Without a session cookie there is nothing to end; an ended session goes to /login too.
    if (!ctx.cookies.get(SESSION_COOKIE)) {
      redirect(ctx, '/login');
      return;
    }
    if ((await formCaller(ctx, deps, '/login')) === undefined) return;
    const { ended } = await deps.auth.logout(ctx, all);
    redirect(ctx, all ? `/login?signed_out=all&ended=${ended}` : '/login?signed_out=1');
  });
}
